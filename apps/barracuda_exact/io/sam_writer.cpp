#include "io/sam_writer.hpp"

#include "io/damage_files.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/kstring.h>
#include <htslib/sam.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <thread>

#include "evk/error.hpp"

namespace evk::barracuda_exact {

static_assert(std::endian::native == std::endian::little, "the BAM bytes are laid out for a little-endian host");

bool sam_path_is_bam(const std::string& path) {
  if (path == "-") return false;
  auto ends = [&](const char* e) {
    const std::size_t n = std::strlen(e);
    return path.size() > n && path.compare(path.size() - n, n, e) == 0;
  };
  if (ends(".bam")) return true;
  if (ends(".sam")) return false;
  input_error(path, "output must end in .sam or .bam (or be - for SAM on stdout)");
}

namespace {

constexpr std::size_t kPart = 4096;  // reads per formatting part

int thread_count(int threads) { return threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()); }

struct Bam {  // a bam1_t owned for one part
  bam1_t* b = bam_init1();
  ~Bam() { bam_destroy1(b); }
};

// The bytes bam_write1 writes for b (little-endian host, CIGARs of at most 65535 operations).
void append_bam(std::string& out, const bam1_t* b) {
  const bam1_core_t& c = b->core;
  if (c.l_qname - c.l_extranul > 255 || c.n_cigar > 0xffff || c.pos > INT_MAX || c.mpos > INT_MAX)
    throw std::runtime_error("a BAM record outside the limits of bam_write1's plain layout");
  const std::uint32_t block_len = static_cast<std::uint32_t>(b->l_data) - c.l_extranul + 32;
  std::uint32_t x[9];
  x[0] = block_len;
  x[1] = static_cast<std::uint32_t>(c.tid);
  x[2] = static_cast<std::uint32_t>(c.pos);
  x[3] = static_cast<std::uint32_t>(c.bin) << 16 | static_cast<std::uint32_t>(c.qual) << 8 |
         static_cast<std::uint32_t>(c.l_qname - c.l_extranul);
  x[4] = static_cast<std::uint32_t>(c.flag) << 16 | (c.n_cigar & 0xffff);
  x[5] = static_cast<std::uint32_t>(c.l_qseq);
  x[6] = static_cast<std::uint32_t>(c.mtid);
  x[7] = static_cast<std::uint32_t>(c.mpos);
  x[8] = static_cast<std::uint32_t>(c.isize);
  out.append(reinterpret_cast<const char*>(x), sizeof x);
  out.append(reinterpret_cast<const char*>(b->data), c.l_qname - c.l_extranul);
  out.append(reinterpret_cast<const char*>(b->data) + c.l_qname, static_cast<std::size_t>(b->l_data - c.l_qname));
}

void append_fastq(std::string& out, const ReadBatch& reads, std::size_t i) {
  const std::string_view q = reads.qual(i);
  out += q.empty() ? '>' : '@';
  out += reads.name(i);
  out += '\n';
  out += reads.seq(i);
  out += '\n';
  if (!q.empty()) {
    out += "+\n";
    out += q;
    out += '\n';
  }
}

}  // namespace

// A record into a damage profile, its reference from the index.
void count_damage(const BwtIndex& idx, const bam1_t* b, DamageRead& dr, std::string& span, DamageProfile& p) {
  if (!damage_read(b, dr) || !p.wants(dr)) return;  // the profile's filters before the reference is read
  const std::int64_t from = std::max<std::int64_t>(dr.pos - p.options().around, 0);
  damage_span(idx, dr.contig, from, dr.pos + reference_span(dr) + p.options().around - from, span);
  p.add_window(dr, span, from);
}

struct SamWriter::Impl {
  std::string path;
  samFile* fp = nullptr;
  sam_hdr_t* hdr = nullptr;
  bam1_t* b = nullptr;  // the serial path's record
  bool bam = false;
  bool failed = false;
  const BwtIndex* idx = nullptr;
  std::unique_ptr<DamageProfile> damage;  // the records written so far (SamOptions::damage)
  ~Impl() {
    if (b) bam_destroy1(b);
    if (hdr) sam_hdr_destroy(hdr);
    if (fp) sam_close(fp);
  }
  [[noreturn]] void write_failed() const { input_error(path, "write failed (disk full?)"); }
  [[noreturn]] void record_failed(const ReadBatch& reads, std::size_t i) const {
    input_error(path, "cannot build the record of read " + std::string(reads.name(i)));
  }
};

SamWriter::SamWriter(const std::string& path, const std::string& file, const BwtIndex& idx, const std::string& cl,
                     int threads, const SamOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path == "-" ? "standard output" : path;
  m.bam = options.uncompressed || sam_path_is_bam(path);
  std::string mode = !m.bam ? "w" : "wb";
  if (m.bam && (options.uncompressed || options.level >= 0))
    mode += std::to_string(options.uncompressed ? 0 : std::min(options.level, 9));
  m.fp = sam_open(file.c_str(), mode.c_str());
  if (!m.fp) input_error(m.path, "cannot open for writing");
  if (m.bam && !options.uncompressed && threads != 1) hts_set_threads(m.fp, thread_count(threads));
  m.idx = &idx;
  if (options.damage) m.damage = std::make_unique<DamageProfile>(damage_profile(idx, options.damage_options));
  m.hdr = sam_hdr_init();
  m.b = bam_init1();
  if (!m.hdr || !m.b) throw std::bad_alloc();
  for (const auto& c : idx.contigs)
    if (sam_hdr_add_line(m.hdr, "SQ", "SN", c.name.c_str(), "LN", std::to_string(c.len).c_str(), nullptr) < 0)
      input_error(m.path, "cannot build the SAM header");
  if (!options.rg_line.empty() && sam_hdr_add_lines(m.hdr, options.rg_line.c_str(), options.rg_line.size()) < 0)
    input_error(m.path, "cannot add the read group line to the SAM header");
  if (options.pg_version.empty())
    sam_hdr_add_line(m.hdr, "PG", "ID", options.pg_id.c_str(), "PN", options.pg_name.c_str(), "CL", cl.c_str(), nullptr);
  else
    sam_hdr_add_line(m.hdr, "PG", "ID", options.pg_id.c_str(), "PN", options.pg_name.c_str(), "VN",
                     options.pg_version.c_str(), "CL", cl.c_str(), nullptr);
  if (sam_hdr_write(m.fp, m.hdr) < 0) m.write_failed();
}

SamWriter::~SamWriter() = default;

bool SamWriter::bam() const { return impl_->bam; }

void SamWriter::format(const ReadBatch& reads, const MappedBatch& mapped, FormattedBatch& out, TaskPool& pool,
                       bool with_unmatched) const {
  const Impl& m = *impl_;
  const std::size_t n = reads.size(), parts = (n + kPart - 1) / kPart;
  if (out.parts.size() < parts) out.parts.resize(parts);
  out.parts_used = parts;
  pool.parallel_for(parts, 1, [&](std::size_t p0, std::size_t p1) {
    Bam rec;
    kstring_t line = KS_INITIALIZE;
    DamageRead dr;
    std::string span;
    for (std::size_t p = p0; p < p1; ++p) {
      FormattedBatch::Part& part = out.parts[p];
      part.records.clear();
      part.sizes.clear();
      part.unmatched.clear();
      if (m.damage && !part.damage) part.damage = std::make_unique<DamageProfile>(damage_profile(*m.idx, m.damage->options()));
      if (part.damage) part.damage->clear();
      for (std::size_t i = p * kPart; i < std::min(n, (p + 1) * kPart); ++i) {
        if (!mapped.record(reads, i, rec.b)) {
          ks_free(&line);
          m.record_failed(reads, i);
        }
        if (m.damage) count_damage(*m.idx, rec.b, dr, span, *part.damage);
        if (m.bam) {
          const std::size_t before = part.records.size();
          append_bam(part.records, rec.b);
          part.sizes.push_back(static_cast<std::uint32_t>(part.records.size() - before));
        } else {
          if (sam_format1(m.hdr, rec.b, &line) < 0) {
            ks_free(&line);
            m.record_failed(reads, i);
          }
          part.records.append(line.s, line.l);
          part.records += '\n';
        }
        if (with_unmatched && mapped.unmatched(i)) append_fastq(part.unmatched, reads, i);
      }
    }
    ks_free(&line);
  });
}

void SamWriter::write(const FormattedBatch& f) {
  Impl& m = *impl_;
  for (std::size_t p = 0; p < f.parts_used; ++p) {
    const FormattedBatch::Part& part = f.parts[p];
    if (m.damage && part.damage) m.damage->merge(*part.damage);
    if (m.bam) {
      BGZF* fp = m.fp->fp.bgzf;
      const char* rec = part.records.data();
      for (const std::uint32_t size : part.sizes) {  // bam_write1's rule: a record starts a new block unless it fits
        if (bgzf_flush_try(fp, size) < 0 || bgzf_write(fp, rec, size) < 0) m.write_failed();
        rec += size;
      }
    } else if (!part.records.empty()) {
      if (hwrite(m.fp->fp.hfile, part.records.data(), part.records.size()) != static_cast<ssize_t>(part.records.size()))
        m.write_failed();
    }
  }
}

void SamWriter::write_serial(const ReadBatch& reads, const MappedBatch& mapped) {
  Impl& m = *impl_;
  DamageRead dr;
  std::string span;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (!mapped.record(reads, i, m.b)) m.record_failed(reads, i);
    if (m.damage) count_damage(*m.idx, m.b, dr, span, *m.damage);
    if (sam_write1(m.fp, m.hdr, m.b) < 0) m.write_failed();
  }
}

const DamageProfile* SamWriter::damage() const { return impl_->damage.get(); }

void SamWriter::close() {
  Impl& m = *impl_;
  const int r = sam_close(m.fp);
  m.fp = nullptr;
  if (r < 0) m.write_failed();
}

struct FastqWriter::Impl {
  std::string path;
  BGZF* fp = nullptr;
  ~Impl() {
    if (fp) bgzf_close(fp);
  }
  void put(const std::string& s) {
    if (!s.empty() && bgzf_write(fp, s.data(), s.size()) < 0) input_error(path, "write failed");
  }
};

FastqWriter::FastqWriter(const std::string& path, const std::string& file, int threads) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->fp = bgzf_open(file.c_str(), "w");
  if (!impl_->fp) input_error(path, "cannot open for writing");
  if (thread_count(threads) > 1 && bgzf_mt(impl_->fp, thread_count(threads), 256) < 0)
    input_error(path, "cannot start the compression threads");
}
FastqWriter::~FastqWriter() = default;

void FastqWriter::write(const FormattedBatch& f) {
  for (std::size_t p = 0; p < f.parts_used; ++p) impl_->put(f.parts[p].unmatched);
}

void FastqWriter::write_serial(const ReadBatch& reads, const MappedBatch& mapped) {
  std::string buf;
  for (std::size_t i = 0; i < reads.size(); ++i)
    if (mapped.unmatched(i)) append_fastq(buf, reads, i);
  impl_->put(buf);
}

void FastqWriter::close() {
  const int r = bgzf_close(impl_->fp);
  impl_->fp = nullptr;
  if (r < 0) input_error(impl_->path, "write failed (disk full?)");
}

}  // namespace evk::barracuda_exact

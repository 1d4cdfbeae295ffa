#include "io/sam_writer.hpp"

#include <htslib/bgzf.h>
#include <htslib/sam.h>

#include <cstring>
#include <thread>

#include "evk/error.hpp"

namespace evk::barracuda_exact {

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

struct SamWriter::Impl {
  std::string path;
  samFile* fp = nullptr;
  sam_hdr_t* hdr = nullptr;
  bam1_t* b = nullptr;
  const BwtIndex* idx = nullptr;
  SamOptions opt;
  bool failed = false;
  ~Impl() {
    if (b) bam_destroy1(b);
    if (hdr) sam_hdr_destroy(hdr);
    if (fp) sam_close(fp);
  }
  void record(const std::string& name, const std::string& seq, const std::string& qual, const Hit& h);
};

SamWriter::SamWriter(const std::string& path, const std::string& file, const BwtIndex& idx, const std::string& cl,
                     int threads, const SamOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path == "-" ? "standard output" : path;
  m.idx = &idx;
  m.opt = options;
  const bool bam = sam_path_is_bam(path);
  m.fp = sam_open(file.c_str(), bam ? "wb" : "w");
  if (!m.fp) input_error(m.path, "cannot open for writing");
  if (bam && threads != 1) hts_set_threads(m.fp, threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()));
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
  if (sam_hdr_write(m.fp, m.hdr) < 0) input_error(m.path, "write failed (disk full?)");
}

SamWriter::~SamWriter() = default;

namespace {
void aux_int(bam1_t* b, const char* tag, int v) { bam_aux_append(b, tag, 'i', 4, reinterpret_cast<const uint8_t*>(&v)); }
void aux_str(bam1_t* b, const char* tag, const std::string& s) {
  bam_aux_append(b, tag, 'Z', static_cast<int>(s.size() + 1), reinterpret_cast<const uint8_t*>(s.c_str()));
}
}  // namespace

void SamWriter::Impl::record(const std::string& name, const std::string& seq, const std::string& qual, const Hit& h) {
  static const char kFwd[] = "ACGTN", kRev[] = "TGCAN";
  const std::size_t n = seq.size();
  std::string s(n, 'N'), q;
  const bool rev = h.count > 0 && h.primary.reverse;
  for (std::size_t i = 0; i < n; ++i) {
    const int c = base_code(rev ? seq[n - 1 - i] : seq[i]);
    s[i] = rev ? kRev[c] : kFwd[c];
  }
  if (!qual.empty()) {
    q.resize(n);
    for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<char>((rev ? qual[n - 1 - i] : qual[i]) - 33);
  }
  const char* qp = qual.empty() ? nullptr : q.data();
  if (h.count == 0) {
    if (bam_set1(b, name.size(), name.c_str(), BAM_FUNMAP, -1, -1, 0, 0, nullptr, -1, -1, 0, n, s.c_str(), qp, 64) < 0)
      failed = true;
    if (!opt.rg_id.empty()) aux_str(b, "RG", opt.rg_id);
  } else {
    const Contig& ct = idx->contigs[static_cast<std::size_t>(h.primary.tid)];
    std::uint16_t flag = rev ? BAM_FREVERSE : 0;
    if (h.bridging) flag |= BAM_FUNMAP;
    const std::uint32_t cigar = static_cast<std::uint32_t>(n) << BAM_CIGAR_SHIFT | BAM_CMATCH;
    const std::uint8_t mapq = h.count == 1 ? 25 : 0;
    if (bam_set1(b, name.size(), name.c_str(), flag, h.primary.tid, h.primary.pos - ct.offset, mapq, n ? 1 : 0, &cigar,
                 -1, -1, 0, n, s.c_str(), qp, 256) < 0) {
      failed = true;
      return;
    }
    if (!opt.rg_id.empty()) aux_str(b, "RG", opt.rg_id);
    char xt = h.count > 1 ? 'R' : 'U';
    if (h.n_ambiguous > 10) xt = 'N';
    bam_aux_append(b, "XT", 'A', 1, reinterpret_cast<const uint8_t*>(&xt));
    aux_int(b, "NM", 0);
    if (h.n_ambiguous) aux_int(b, "XN", h.n_ambiguous);
    aux_int(b, "X0", static_cast<int>(h.count));
    if (h.count <= static_cast<std::uint64_t>(opt.max_top2)) aux_int(b, "X1", 0);  // bwa: only up to aln's -R
    aux_int(b, "XM", 0);
    aux_int(b, "XO", 0);
    aux_int(b, "XG", 0);
    aux_str(b, "MD", std::to_string(n));
    if (!h.alts.empty()) {
      std::string xa;
      for (const auto& a : h.alts) {
        const Contig& c = idx->contigs[static_cast<std::size_t>(a.tid)];
        xa += c.name + "," + (a.reverse ? '-' : '+') + std::to_string(a.pos - c.offset + 1) + "," + std::to_string(n) +
              "M,0;";
      }
      aux_str(b, "XA", xa);
    }
  }
  if (sam_write1(fp, hdr, b) < 0) failed = true;
}

void SamWriter::write(const ReadBatch& reads, const std::vector<Hit>& hits) {
  for (std::size_t i = 0; i < reads.size(); ++i) impl_->record(reads.name[i], reads.seq[i], reads.qual[i], hits[i]);
  if (impl_->failed) input_error(impl_->path, "write failed (disk full?)");
}

void SamWriter::close() {
  Impl& m = *impl_;
  const int r = sam_close(m.fp);
  m.fp = nullptr;
  if (r < 0 || m.failed) input_error(m.path, "write failed (disk full?)");
}

struct FastqWriter::Impl {
  std::string path;
  BGZF* fp = nullptr;
  bool failed = false;
  ~Impl() {
    if (fp) bgzf_close(fp);
  }
};

FastqWriter::FastqWriter(const std::string& path, const std::string& file) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->fp = bgzf_open(file.c_str(), "w");
  if (!impl_->fp) input_error(path, "cannot open for writing");
}
FastqWriter::~FastqWriter() = default;

void FastqWriter::write(const ReadBatch& reads, const std::vector<Hit>& hits) {
  std::string buf;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (hits[i].mapped()) continue;
    if (reads.qual[i].empty()) {
      buf += ">" + reads.name[i] + "\n" + reads.seq[i] + "\n";
    } else {
      buf += "@" + reads.name[i] + "\n" + reads.seq[i] + "\n+\n" + reads.qual[i] + "\n";
    }
  }
  if (!buf.empty() && bgzf_write(impl_->fp, buf.data(), buf.size()) < 0) input_error(impl_->path, "write failed");
}

void FastqWriter::close() {
  const int r = bgzf_close(impl_->fp);
  impl_->fp = nullptr;
  if (r < 0) input_error(impl_->path, "write failed (disk full?)");
}

}  // namespace evk::barracuda_exact

#include "io/aln_sam.hpp"

#include <htslib/sam.h>

#include <thread>

#include "evk/error.hpp"
#include "io/sam_writer.hpp"

namespace evk::barracuda_exact {

ReadGroup parse_read_group(const std::string& text) {
  ReadGroup rg;
  if (text.empty()) return rg;
  if (text.rfind("@RG", 0) != 0) input_error("-R", "the read group line does not start with @RG");
  if (text.find('\t') != std::string::npos)
    input_error("-R", "the read group line contains a literal tab (write \\t)");
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char c = text[++i];
      if (c == 't') rg.line += '\t';
      else if (c == 'n') rg.line += '\n';
      else if (c == 'r') rg.line += '\r';
      else if (c == '\\') rg.line += '\\';
    } else if (text[i] != '\\') {
      rg.line += text[i];
    }
  }
  const std::size_t p = rg.line.find("\tID:");
  if (p == std::string::npos) input_error("-R", "no ID in the read group line");
  const std::size_t b = p + 4, e = rg.line.find_first_of("\t\n", b);
  rg.id = rg.line.substr(b, e == std::string::npos ? std::string::npos : e - b);
  if (rg.id.size() > 255) input_error("-R", "the read group ID is longer than 255 characters");
  if (rg.id.empty()) input_error("-R", "empty read group ID");
  return rg;
}

namespace {
void aux_int(bam1_t* b, const char* tag, std::int64_t v) {
  const std::int32_t x = static_cast<std::int32_t>(v);
  bam_aux_append(b, tag, 'i', 4, reinterpret_cast<const uint8_t*>(&x));
}
void aux_str(bam1_t* b, const char* tag, const std::string& s) {
  bam_aux_append(b, tag, 'Z', static_cast<int>(s.size() + 1), reinterpret_cast<const uint8_t*>(s.c_str()));
}
}  // namespace

bool aln_record_to_bam(bam1_t* b, std::string_view name, std::string_view seq, std::string_view qual,
                       const AlnRecord& r, const std::string& rg_id) {
  static const char kFwd[] = "ACGTN", kRev[] = "TGCAN";
  const std::size_t n = seq.size();
  thread_local std::string s, q;
  s.assign(n, 'N');
  for (std::size_t i = 0; i < n; ++i) {
    const int c = base_code(r.reverse ? seq[n - 1 - i] : seq[i]);
    s[i] = r.reverse ? kRev[c] : kFwd[c];
  }
  if (!qual.empty()) {
    q.resize(n);
    for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<char>((r.reverse ? qual[n - 1 - i] : qual[i]) - 33);
  }
  if (bam_set1(b, name.size(), name.data(), r.flag, r.tid, r.pos, static_cast<uint8_t>(r.mapq), r.cigar.size(),
               r.cigar.empty() ? nullptr : r.cigar.data(), r.mtid, r.mpos, r.isize, n, s.c_str(),
               qual.empty() ? nullptr : q.data(), 256) < 0)
    return false;
  if (!rg_id.empty()) aux_str(b, "RG", rg_id);
  if (r.xc >= 0) aux_int(b, "XC", r.xc);
  if (r.aligned) {
    bam_aux_append(b, "XT", 'A', 1, reinterpret_cast<const uint8_t*>(&r.xt));
    aux_int(b, "NM", r.nm);
    if (r.xn) aux_int(b, "XN", r.xn);
    if (r.paired) {
      aux_int(b, "SM", r.sm);
      aux_int(b, "AM", r.am);
    }
    if (r.has_x0) aux_int(b, "X0", static_cast<std::int64_t>(r.x0));
    if (r.has_x1) aux_int(b, "X1", static_cast<std::int64_t>(r.x1));
    aux_int(b, "XM", r.xm);
    aux_int(b, "XO", r.xo);
    aux_int(b, "XG", r.xg);
    if (!r.md.empty()) aux_str(b, "MD", r.md);
    if (!r.xa.empty()) aux_str(b, "XA", r.xa);
  }
  return true;
}

struct AlnSamWriter::Impl {
  std::string path, rg_id;
  samFile* fp = nullptr;
  sam_hdr_t* hdr = nullptr;
  bam1_t* b = nullptr;
  bool failed = false;
  ~Impl() {
    if (b) bam_destroy1(b);
    if (hdr) sam_hdr_destroy(hdr);
    if (fp) sam_close(fp);
  }
  void one(std::string_view name, std::string_view seq, std::string_view qual, const AlnRecord& r) {
    if (!aln_record_to_bam(b, name, seq, qual, r, rg_id) || sam_write1(fp, hdr, b) < 0) failed = true;
  }
};

AlnSamWriter::AlnSamWriter(const std::string& path, const std::string& file, const BwtIndex& idx,
                           const std::string& command_line, const ReadGroup& rg, int threads,
                           const SamProgram& program, int level)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.path = path == "-" ? "standard output" : path;  // how errors name it
  m.rg_id = rg.id;
  const bool bam = sam_path_is_bam(path);
  const std::string mode = !bam ? "w" : level >= 1 && level <= 9 ? "wb" + std::to_string(level) : "wb";
  m.fp = sam_open(file.c_str(), mode.c_str());
  if (!m.fp) input_error(m.path, "cannot open for writing");
  if (bam && threads != 1)
    hts_set_threads(m.fp, threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency()));
  m.hdr = sam_hdr_init();
  m.b = bam_init1();
  if (!m.hdr || !m.b) throw std::bad_alloc();
  for (const auto& c : idx.contigs)
    if (sam_hdr_add_line(m.hdr, "SQ", "SN", c.name.c_str(), "LN", std::to_string(c.len).c_str(), nullptr) < 0)
      input_error(m.path, "cannot build the SAM header");
  if (!rg.line.empty() && sam_hdr_add_lines(m.hdr, rg.line.c_str(), rg.line.size()) < 0)
    input_error("-R", "htslib refuses the read group line");
  if (program.version.empty())
    sam_hdr_add_line(m.hdr, "PG", "ID", program.id.c_str(), "PN", program.name.c_str(), "CL", command_line.c_str(), nullptr);
  else
    sam_hdr_add_line(m.hdr, "PG", "ID", program.id.c_str(), "PN", program.name.c_str(), "VN", program.version.c_str(), "CL",
                     command_line.c_str(), nullptr);
  if (sam_hdr_write(m.fp, m.hdr) < 0) input_error(m.path, "write failed (disk full?)");
}

AlnSamWriter::~AlnSamWriter() = default;

void AlnSamWriter::write(const ReadBatch& reads, const std::vector<AlnRecord>& recs) {
  for (std::size_t i = 0; i < reads.size(); ++i) impl_->one(reads.name(i), reads.seq(i), reads.qual(i), recs[i]);
  if (impl_->failed) input_error(impl_->path, "write failed (disk full?)");
}

void AlnSamWriter::write_pairs(const ReadBatch& r1, const ReadBatch& r2, const std::vector<AlnRecord>& rec1,
                               const std::vector<AlnRecord>& rec2) {
  for (std::size_t i = 0; i < r1.size(); ++i) {
    impl_->one(r1.name(i), r1.seq(i), r1.qual(i), rec1[i]);
    impl_->one(r2.name(i), r2.seq(i), r2.qual(i), rec2[i]);
  }
  if (impl_->failed) input_error(impl_->path, "write failed (disk full?)");
}

void AlnSamWriter::close() {
  Impl& m = *impl_;
  const int r = sam_close(m.fp);
  m.fp = nullptr;
  if (r < 0 || m.failed) input_error(m.path, "write failed (disk full?)");
}

}  // namespace evk::barracuda_exact

#include "io/sai.hpp"

#include <cstring>

#include "evk/error.hpp"

namespace evk::barracuda_exact {

AlnOptions aln_options_of(const GapOptions& g) {
  AlnOptions a;
  a.s_mm = g.s_mm;
  a.s_gapo = g.s_gapo;
  a.s_gape = g.s_gape;
  a.max_diff = g.max_diff;
  a.fnr = g.fnr;
  a.max_gapo = g.max_gapo;
  a.max_gape = g.max_gape;
  a.gape_counts = (g.mode & kModeGape) != 0;
  a.indel_end_skip = g.indel_end_skip;
  a.max_del_occ = g.max_del_occ;
  a.max_entries = g.max_entries;
  a.seed_len = g.seed_len;
  a.max_seed_diff = g.max_seed_diff;
  a.max_top2 = g.max_top2;
  a.trim_qual = g.trim_qual;
  a.log_gap = (g.mode & kModeLogGap) != 0;
  a.non_stop = (g.mode & kModeNonstop) != 0;
  return a;
}

static_assert(sizeof(float) == 4);

void pack_aln(const SaiAln& a, unsigned char out[24]) {
  const std::uint64_t bits = static_cast<std::uint64_t>(a.n_mm & 0xffu) | static_cast<std::uint64_t>(a.n_gapo & 0xffu) << 8 |
                             static_cast<std::uint64_t>(a.n_gape & 0xffu) << 16 |
                             static_cast<std::uint64_t>(a.score & 0xfffffu) << 24 |
                             static_cast<std::uint64_t>(a.n_ins & 0x3ffu) << 44 |
                             static_cast<std::uint64_t>(a.n_del & 0x3ffu) << 54;
  std::memcpy(out, &bits, 8);
  std::memcpy(out + 8, &a.k, 8);
  std::memcpy(out + 16, &a.l, 8);
}

SaiAln unpack_aln(const unsigned char in[24]) {
  std::uint64_t bits = 0;
  SaiAln a;
  std::memcpy(&bits, in, 8);
  std::memcpy(&a.k, in + 8, 8);
  std::memcpy(&a.l, in + 16, 8);
  a.n_mm = bits & 0xff;
  a.n_gapo = bits >> 8 & 0xff;
  a.n_gape = bits >> 16 & 0xff;
  a.score = bits >> 24 & 0xfffff;
  a.n_ins = bits >> 44 & 0x3ff;
  a.n_del = bits >> 54 & 0x3ff;
  return a;
}

SaiWriter::SaiWriter(const std::string& name, const std::string& file, const GapOptions& opt) : name_(name) {
  if (file == "-") {
    f_ = stdout;
  } else {
    f_ = std::fopen(file.c_str(), "wb");
    if (!f_) input_error(name, "cannot open for writing");
    own_ = true;
  }
  failed_ = std::fwrite("SAI\1", 1, 4, f_) != 4 || std::fwrite(&opt, sizeof opt, 1, f_) != 1;
}

SaiWriter::~SaiWriter() {
  if (own_ && f_) std::fclose(f_);
}

void SaiWriter::write(const std::vector<SaiAln>& alns) {
  const std::int32_t n = static_cast<std::int32_t>(alns.size());
  failed_ |= std::fwrite(&n, 4, 1, f_) != 1;
  unsigned char rec[24];
  for (const auto& a : alns) {
    pack_aln(a, rec);
    failed_ |= std::fwrite(rec, 24, 1, f_) != 1;
  }
  if (failed_) input_error(name_, "write failed (disk full or closed pipe?)");
}

void SaiWriter::close() {
  bool bad = failed_ || std::fflush(f_) != 0;
  if (own_) {
    bad |= std::fclose(f_) != 0;
    f_ = nullptr;
  }
  if (bad) input_error(name_, "write failed (disk full or closed pipe?)");
}

SaiReader::SaiReader(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) input_error(path, "cannot open .sai file");
  char magic[4];
  if (std::fread(magic, 1, 4, f_) != 4 || std::memcmp(magic, "SAI\1", 4) != 0)
    input_error(path, "not a bwa 0.7 .sai file (no SAI magic; written by another bwa version?)");
  if (std::fread(&opt_, sizeof opt_, 1, f_) != 1) input_error(path, "truncated .sai header");
}

SaiReader::~SaiReader() {
  if (f_) std::fclose(f_);
}

bool SaiReader::next(std::vector<SaiAln>& out) {
  out.clear();
  std::int32_t n = 0;
  const std::size_t got = std::fread(&n, 1, 4, f_);
  if (got == 0 && std::feof(f_)) return false;
  const std::string where = path_ + ": record " + std::to_string(n_ + 1);
  if (got != 4) input_error(where, "truncated");
  if (n < 0 || n > (1 << 24)) input_error(where, "impossible alignment count " + std::to_string(n));
  unsigned char rec[24];
  for (std::int32_t i = 0; i < n; ++i) {
    if (std::fread(rec, 24, 1, f_) != 1) input_error(where, "truncated");
    SaiAln a = unpack_aln(rec);
    if (a.k > a.l) input_error(where, "empty SA interval");
    out.push_back(a);
  }
  ++n_;
  return true;
}

}  // namespace evk::barracuda_exact

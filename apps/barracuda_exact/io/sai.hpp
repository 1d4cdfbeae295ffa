// bwa 0.7.17's .sai files (what `bwa aln` writes and `bwa samse`/`sampe` read): the magic
// "SAI\1", the aln options as bwa's gap_opt_t (64 bytes, little-endian), then per read in input
// order an int32 count and that many bwt_aln1_t records (24 bytes: a 64-bit bit field n_mm:8
// n_gapo:8 n_gape:8 score:20 n_ins:10 n_del:10, then k and l as uint64).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/aln_options.hpp"

namespace evk::barracuda_exact {

// One alignment of a read as a .sai holds it: SA interval [k, l] and its differences (bwa's
// bwt_aln1_t; core/aln_search's Aln in the file's field widths).
struct SaiAln {
  std::uint64_t k = 0, l = 0;
  std::uint32_t n_mm = 0, n_gapo = 0, n_gape = 0, score = 0, n_ins = 0, n_del = 0;
  bool operator==(const SaiAln&) const = default;
};

// bwa's gap_opt_t with gap_init_opt()'s defaults (bwa aln with no options).
struct GapOptions {
  std::int32_t s_mm = 3, s_gapo = 11, s_gape = 4;
  std::int32_t mode = 0x01 | 0x02;  // BWA_MODE_GAPE | BWA_MODE_COMPREAD; bits 24-31: barcode length
  std::int32_t indel_end_skip = 5, max_del_occ = 10, max_entries = 2000000;
  float fnr = 0.04f;
  std::int32_t max_diff = -1, max_gapo = 1, max_gape = 6;
  std::int32_t max_seed_diff = 2, seed_len = 32;
  std::int32_t n_threads = 1;
  std::int32_t max_top2 = 30;
  std::int32_t trim_qual = 0;
};
static_assert(sizeof(GapOptions) == 64, "gap_opt_t is 16 four-byte fields");

constexpr std::int32_t kModeGape = 0x01, kModeCompread = 0x02, kModeLogGap = 0x04, kModeCfy = 0x08,
                       kModeNonstop = 0x10, kModeBam = 0x20, kModeBamSe = 0x40, kModeBamRead1 = 0x80,
                       kModeBamRead2 = 0x100, kModeIl13 = 0x200;

// The search options a gap_opt_t stands for (bwa aln's -n -o -e ... as the core takes them).
AlnOptions aln_options_of(const GapOptions& g);

// Packs / unpacks one bwt_aln1_t.
void pack_aln(const SaiAln& a, unsigned char out[24]);
SaiAln unpack_aln(const unsigned char in[24]);

class SaiWriter {
 public:
  // file: the path to write ("-" = stdout); name: for messages.
  SaiWriter(const std::string& name, const std::string& file, const GapOptions& opt);
  ~SaiWriter();
  SaiWriter(const SaiWriter&) = delete;
  SaiWriter& operator=(const SaiWriter&) = delete;
  void write(const std::vector<SaiAln>& alns);  // one read
  void close();                                 // flushes; InputError when a write failed

 private:
  std::string name_;
  std::FILE* f_ = nullptr;
  bool own_ = false, failed_ = false;
};

class SaiReader {
 public:
  // InputError naming the file: missing, not a .sai (magic), truncated header.
  explicit SaiReader(const std::string& path);
  ~SaiReader();
  SaiReader(const SaiReader&) = delete;
  SaiReader& operator=(const SaiReader&) = delete;
  const GapOptions& options() const { return opt_; }
  // The next read's alignments; false at the end of the file (no partial record). A truncated
  // record or an impossible count is an InputError naming the file and the read.
  bool next(std::vector<SaiAln>& out);
  std::uint64_t records() const { return n_; }

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  GapOptions opt_;
  std::uint64_t n_ = 0;
};

}  // namespace evk::barracuda_exact

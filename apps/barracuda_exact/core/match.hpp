// Exact matching, one definition for CPU and GPU: backward search of the read's reverse complement
// through the FM-index, exactly as bwa aln's exact branch (bwt_match_exact_alt), giving the SA
// interval (k, l) of every read. k > l: no hit. k == 0: an ambiguous base was met (no hit).
#pragma once
#include <cstdint>
#include <vector>

#include "core/index.hpp"

namespace evk::barracuda_exact {

struct KL {
  std::uint64_t k = 0, l = 0;
  bool hit() const { return k != 0 && k <= l; }
  std::uint64_t count() const { return hit() ? l - k + 1 : 0; }
  bool operator==(const KL&) const = default;
};

// A batch of reads as base codes (0..3 = ACGT, 4 = anything else), concatenated.
struct ReadCodes {
  std::vector<std::uint8_t> codes;
  std::vector<std::uint64_t> offset;  // start of read i in codes
  std::vector<std::uint32_t> len;
  std::size_t size() const { return len.size(); }
  void clear() {
    codes.clear();
    offset.clear();
    len.clear();
  }
  void add(const char* seq, std::size_t n);  // converts characters to codes
};

KL match_exact(const BwtIndex& idx, const std::uint8_t* codes, std::uint32_t len);
// The CPU backend, multi-threaded (threads <= 0: all cores).
std::vector<KL> match_cpu(const BwtIndex& idx, const ReadCodes& reads, int threads = 0);

// Reads packed for the kernel: 4 bits per base, 8 per word (base j at bits 4*(j%8)), blocked by 32
// reads (word w of read r at ((r/32)*stride + w)*32 + r%32), every read padded to `stride` words.
struct PackedReads {
  std::vector<std::uint32_t> words;
  std::vector<std::uint32_t> index;  // offset of word 0 of read r
  std::vector<std::uint32_t> len;
  std::uint32_t stride = 1;           // words per read
  std::size_t size() const { return len.size(); }
};
void pack_reads(const ReadCodes& reads, PackedReads& out);
// The same layout in parts (the pipeline packs in parallel straight into pinned memory):
// words per read for reads of at most max_len bases, and reads [r0, r1) (r0 a multiple of 32) into
// `words` (the whole batch's array; the words of those reads' 32-read blocks are overwritten).
std::uint32_t packed_stride(std::uint32_t max_len);
void pack_reads_range(const ReadCodes& reads, std::uint32_t stride, std::size_t r0, std::size_t r1, std::uint32_t* words);

}  // namespace evk::barracuda_exact

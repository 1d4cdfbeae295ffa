// The inexact kernel's interface on the host, without CUDA (shared by the GPU backend, the GI
// problem and the test that runs the kernel's source compiled for the host): its parameter block,
// the per-length maximum differences, its output format, and the merge of its output with the CPU
// search of the reads it hands back.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/aln_options.hpp"
#include "core/aln_search.hpp"
#include "core/index.hpp"
#include "core/match.hpp"

namespace evk::barracuda_exact {

struct AlnKernelParams {  // mirrors the kernel's aln_params
  int s_mm, s_gapo, s_gape;
  int max_gapo, max_gape, gape_counts;
  int indel_end_skip, max_del_occ, max_entries;
  int seed_len, max_seed_diff, max_top2;
  int log_gap, non_stop;
};

// The kernel's compile-time limits (its macros' defaults).
constexpr int kAlnKernelMaxLen = 256;
constexpr int kAlnKernelStackCap = 4095;
constexpr int kAlnKernelAlnCap = 16;
constexpr int kAlnKernelBlockW = 128;
constexpr std::uint32_t kHandedBack = 0xffffffffu;
constexpr const char* kAlnKernelEntry = "cuda_inexact_match";

// The parameters for a batch whose longest read has max_len bases (bwa limits the gap opens by
// that read's maximum differences).
AlnKernelParams aln_kernel_params(const AlnOptions& opt, int max_len);
// bwa's maximum differences for read lengths 0..max_len.
std::vector<int> aln_max_diff_table(const AlnOptions& opt, int max_len);
// True when the options fit the kernel's packed entries (else every read goes to the CPU).
bool aln_kernel_supports(const AlnOptions& opt, const BwtIndex& idx, int max_len);

// One hit interval as the kernel writes it: k, l, then n_mm | n_gapo << 8 | n_gape << 16 |
// n_ins << 24 | n_del << 34 | score << 44.
Aln decode_kernel_aln(const std::uint64_t* w);

// The entries a read has in the kernel's output: n_out, or 0 when it was handed back or n_out
// exceeds aln_cap (not answered: poison or garbage).
constexpr std::uint32_t kernel_entries(std::uint32_t n_out, int aln_cap) {
  return n_out == kHandedBack || n_out > static_cast<std::uint32_t>(aln_cap) ? 0u : n_out;
}

// The kernel's output compacted (the CPU reference of core/aln_compact.cu): each read's
// kernel_entries (3 words each) taken from its ALN_CAP x 3-word slot and packed in read order.
std::vector<std::uint64_t> compact_kernel_output(std::span<const std::uint32_t> n_out,
                                                 std::span<const std::uint64_t> aln_out, int aln_cap);

// The batch's hit lists from the kernel's compacted output (n_out per read as the kernel wrote it,
// packed: the answered reads' entries in read order), searching the handed-back reads on the CPU
// (threads). Throws std::runtime_error for a read neither answered nor handed back (n_out > aln_cap)
// or when packed does not hold exactly the answered reads' entries. Returns the number handed back.
std::size_t merge_kernel_output_packed(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt,
                                       std::span<const std::uint32_t> n_out, std::span<const std::uint64_t> packed,
                                       int aln_cap, int threads, AlnBatch& out);
// The reads the kernel handed back (n_out == kHandedBack), in order. Throws std::runtime_error for
// a read neither answered nor handed back (n_out > aln_cap), as the merge does.
std::vector<std::uint32_t> handed_back_reads(std::span<const std::uint32_t> n_out, int aln_cap);
// The reads of `reads` at ids, in that order, with their (searched) lengths: a later pass's batch.
ReadCodes gather_reads(const ReadCodes& reads, std::span<const std::uint32_t> ids);
// Splices a later pass's output into a batch's (n_out, packed as merge_kernel_output_packed takes
// them): the pass searched reads[j] (reads handed back so far, in increasing order); where it
// answered (pass_n_out[j] <= pass_aln_cap) the read gets pass_n_out[j] and its entries (pass_packed,
// the answered reads' entries in j order); where it handed the read back again, it stays handed
// back. Throws std::runtime_error for inconsistent input (a read not handed back, an unanswered
// pass_n_out, packed sizes that do not match the counts).
void splice_pass_output(std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& packed,
                        std::span<const std::uint32_t> reads, std::span<const std::uint32_t> pass_n_out,
                        std::span<const std::uint64_t> pass_packed, int pass_aln_cap);
// The same from the kernel's raw output (aln_out: ALN_CAP x 3 words per read).
std::size_t merge_kernel_output(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt,
                                const std::vector<std::uint32_t>& n_out, const std::vector<std::uint64_t>& aln_out,
                                int aln_cap, int threads, AlnBatch& out);

}  // namespace evk::barracuda_exact

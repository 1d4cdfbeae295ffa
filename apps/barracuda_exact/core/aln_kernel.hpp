// The inexact kernel's interface on the host, without CUDA (shared by the GPU backend, the GI
// problem and the test that runs the kernel's source compiled for the host): its parameter block,
// the per-length maximum differences, its output format, and the merge of its output with the CPU
// search of the reads it hands back.
#pragma once
#include <cstdint>
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

// The batch's hit lists from the kernel's output (n_out per read, aln_out ALN_CAP x 3 words per
// read), searching the handed-back reads on the CPU (threads). Returns the number handed back.
std::size_t merge_kernel_output(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt,
                                const std::vector<std::uint32_t>& n_out, const std::vector<std::uint64_t>& aln_out,
                                int aln_cap, int threads, AlnBatch& out);

}  // namespace evk::barracuda_exact

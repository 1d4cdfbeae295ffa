// Text positions of the inexact hits' SA rows on the GPU, with the exact mode's support kernel
// (core/sa_lookup.cu: bwa's bwt_sa, equal to BwtIndex::sa_at). bwa samse needs the position of the
// row it draws as the primary and, for reads with at most n_multi + 1 = 4 occurrences in all, of
// every row (XA). The draw happens later, in input order on the host; so for every read with 1..4
// rows in all, each of its rows is looked up here (in the GPU lane, right after the search), and
// the host's samse takes them as KnownRows (core/samse.hpp); a read with more rows has its primary
// looked up on the host. Without the embedded kernel image, nothing is looked up (all on the host).
#pragma once
#include <cstdint>
#include <vector>

#include "core/aln_search.hpp"
#include "core/index.hpp"
#include "core/samse.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include "core/gpu_exact.hpp"
#include "evk/cuda_library.hpp"
#endif

namespace evk::barracuda_exact {

constexpr int kKnownRows = 4;  // rows per interval looked up (bwa samse's n_multi + 1)

// The rows of read i whose positions `pos` holds (GpuHitRows::lookup's output), for samse_record.
struct ReadRows {
  std::uint64_t row[kKnownRows], pos[kKnownRows];
  int n = 0;
  KnownRows known() const { return KnownRows{row, pos, n}; }
};
void known_rows(const AlnBatch& alns, const std::vector<std::uint64_t>& pos, std::size_t i, ReadRows& out);

#if defined(EVK_HAVE_CUDA)
class GpuHitRows {
 public:
  // bwt: the index's BWT on `device` (the inexact aligner's); the sampled SA is uploaded here.
  GpuHitRows(const BwtIndex& idx, const DeviceBwt& bwt, int device);
  ~GpuHitRows();
  GpuHitRows(const GpuHitRows&) = delete;
  GpuHitRows& operator=(const GpuHitRows&) = delete;
  bool available() const { return kernel_ != nullptr; }
  // pos: kKnownRows per interval of alns: pos[4 e + j] = sa_at(alns.alns[e].k + j) for the intervals
  // of reads with 1..4 rows in all (rows beyond the interval's, and all other reads' rows: ~0).
  // Synchronous; returns the milliseconds of the upload, kernel and download.
  double lookup(const AlnBatch& alns, std::vector<std::uint64_t>& pos);
  bool poison_outputs = false;  // tests: device and host outputs poisoned before each launch

 private:
  int device_;
  const DeviceBwt& bwt_;
  SaConsts consts_{};
  std::uint64_t* sa_ = nullptr;
  CudaLibrary lib_;
  cudaKernel_t kernel_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_[2] = {};
  PinnedBuffer host_kl_, host_pos_;
  std::uint64_t *kl_ = nullptr, *pos_ = nullptr;
  std::size_t cap_ = 0;
};

#endif

}  // namespace evk::barracuda_exact

// Text positions of the inexact hits' SA rows on the GPU, with the exact mode's support kernel
// (core/sa_lookup.cu: bwa's bwt_sa, equal to BwtIndex::sa_at). bwa samse needs the position of the
// row it draws as the primary and, for reads with at most n_multi + 1 = 4 occurrences in all, of
// every row (XA). The draw happens later, in input order on the host; so for every read with 1..4
// rows in all, each of its rows is looked up here (in the GPU lane, right after the search), and
// the host's samse takes them as KnownRows (core/samse.hpp); a read with more rows has its primary
// looked up on the host. Without the embedded kernel image, nothing is looked up (all on the host).
#pragma once
#include <cstdint>
#include <memory>
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
// The index's sampled suffix array on one device (the GPU's lanes share it).
class DeviceSa {
 public:
  DeviceSa(const BwtIndex& idx, int device);
  ~DeviceSa();
  DeviceSa(const DeviceSa&) = delete;
  DeviceSa& operator=(const DeviceSa&) = delete;
  const std::uint64_t* data() const { return d_; }
  std::size_t bytes() const { return bytes_; }

 private:
  int device_;
  std::uint64_t* d_ = nullptr;
  std::size_t bytes_ = 0;
};

class GpuHitRows {
 public:
  // bwt: the index's BWT on `device` (the inexact aligner's); sa: its sampled SA there (null: uploaded here).
  GpuHitRows(const BwtIndex& idx, const DeviceBwt& bwt, int device, std::shared_ptr<const DeviceSa> sa = nullptr);
  ~GpuHitRows();
  GpuHitRows(const GpuHitRows&) = delete;
  GpuHitRows& operator=(const GpuHitRows&) = delete;
  bool available() const { return kernel_ != nullptr; }
  // pos: kKnownRows per interval of alns: pos[4 e + j] = sa_at(alns.alns[e].k + j) for the intervals
  // of reads with 1..4 rows in all (rows beyond the interval's, and all other reads' rows: ~0).
  // Synchronous; returns the milliseconds of the upload, kernel and download. Without device memory
  // for the batch's intervals nothing is looked up (all ~0: samse looks them up on the host).
  double lookup(const AlnBatch& alns, std::vector<std::uint64_t>& pos);
  bool poison_outputs = false;  // tests: device and host outputs poisoned before each launch

 private:
  bool grow(std::size_t n);  // buffers for n intervals; false (none) when the device has no room
  int device_;
  const DeviceBwt& bwt_;
  SaConsts consts_{};
  std::shared_ptr<const DeviceSa> sa_;
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

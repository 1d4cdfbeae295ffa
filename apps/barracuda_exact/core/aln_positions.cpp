#include "core/aln_positions.hpp"

#include <cstring>
#include <stdexcept>

#include "core/hits.hpp"

#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_check.hpp"
#include "evk_kernels/barracuda_sa_lookup.hpp"
#endif

namespace evk::barracuda_exact {

static_assert(kKnownRows == kSaRowsPerHit, "sa_lookup.cu resolves kSaRowsPerHit rows per (k, l)");

void known_rows(const AlnBatch& alns, const std::vector<std::uint64_t>& pos, std::size_t i, ReadRows& out) {
  out.n = 0;
  if (pos.size() < alns.alns.size() * kKnownRows) return;
  for (std::uint32_t e = alns.offset[i]; e < alns.offset[i + 1]; ++e) {
    const Aln& a = alns.alns[e];
    for (std::uint64_t j = 0; j < kKnownRows && a.k + j <= a.l; ++j) {
      const std::uint64_t p = pos[std::size_t{e} * kKnownRows + j];
      if (p == ~0ull || out.n == kKnownRows) continue;
      out.row[out.n] = a.k + j;
      out.pos[out.n++] = p;
    }
  }
}

#if defined(EVK_HAVE_CUDA)

DeviceSa::DeviceSa(const BwtIndex& idx, int device) : device_(device), bytes_(idx.sa.size() * sizeof(std::uint64_t)) {
  EVK_CUDA(cudaSetDevice(device));
  EVK_CUDA(cudaMalloc(&d_, bytes_));
  EVK_CUDA(cudaMemcpy(d_, idx.sa.data(), bytes_, cudaMemcpyHostToDevice));
}

DeviceSa::~DeviceSa() {
  cudaSetDevice(device_);
  cudaFree(d_);
}

GpuHitRows::GpuHitRows(const BwtIndex& idx, const DeviceBwt& bwt, int device, std::shared_ptr<const DeviceSa> sa)
    : device_(device), bwt_(bwt) {
  EVK_CUDA(cudaSetDevice(device));
  if (idx.sa.empty() || idx.sa_intv == 0 || (idx.sa_intv & (idx.sa_intv - 1)) != 0) return;  // host lookups
  const KernelImage& img = barracuda_sa_lookup();
  if (img.fatbin_size == 0) return;  // built without the fatbin: positions are looked up on the host
  lib_ = CudaLibrary(img.fatbin);
  kernel_ = lib_.kernel("sa_lookup");
  consts_.primary = idx.primary;
  consts_.seq_len = idx.seq_len;
  for (int i = 0; i < 5; ++i) consts_.L2[i] = idx.L2[i];
  consts_.sa_intv = idx.sa_intv;
  sa_ = sa ? std::move(sa) : std::make_shared<const DeviceSa>(idx, device);
  EVK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (auto& e : ev_) EVK_CUDA(cudaEventCreate(&e));
}

GpuHitRows::~GpuHitRows() {
  cudaSetDevice(device_);
  if (stream_) cudaStreamSynchronize(stream_);
  for (auto& e : ev_)
    if (e) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
  cudaFree(kl_);
  cudaFree(pos_);
}

bool GpuHitRows::grow(std::size_t n) {
  cudaFree(kl_);
  cudaFree(pos_);
  kl_ = pos_ = nullptr;
  cap_ = 0;
  const std::size_t c = n + n / 4;
  if (cudaMalloc(&kl_, c * 2 * sizeof(std::uint64_t)) != cudaSuccess ||
      cudaMalloc(&pos_, c * kKnownRows * sizeof(std::uint64_t)) != cudaSuccess) {
    cudaGetLastError();  // out of memory is not sticky: clear it
    cudaFree(kl_);
    cudaFree(pos_);
    kl_ = pos_ = nullptr;
    return false;
  }
  cap_ = c;
  return true;
}

double GpuHitRows::lookup(const AlnBatch& alns, std::vector<std::uint64_t>& pos) {
  const std::size_t n = alns.alns.size();
  pos.assign(n * kKnownRows, ~0ull);
  if (!kernel_ || n == 0) return 0;
  EVK_CUDA(cudaSetDevice(device_));
  auto* kl = static_cast<std::uint64_t*>(host_kl_.reserve(n * 2 * sizeof(std::uint64_t)));
  auto* out = static_cast<std::uint64_t*>(host_pos_.reserve(n * kKnownRows * sizeof(std::uint64_t)));
  // the intervals of reads with 1..4 rows in all; (0, 0) for the others (the kernel skips k = 0)
  for (std::size_t i = 0; i < alns.size(); ++i) {
    std::uint64_t rows = 0;
    for (std::uint32_t e = alns.offset[i]; e < alns.offset[i + 1]; ++e) rows += alns.alns[e].l - alns.alns[e].k + 1;
    const bool want = rows <= static_cast<std::uint64_t>(kKnownRows);
    for (std::uint32_t e = alns.offset[i]; e < alns.offset[i + 1]; ++e) {
      kl[2 * e] = want ? alns.alns[e].k : 0;
      kl[2 * e + 1] = want ? alns.alns[e].l : 0;
    }
  }
  if (n > cap_ && !grow(n)) return 0;  // no room on the device: the host looks them all up (pos stays ~0)
  if (poison_outputs) {
    std::memset(static_cast<void*>(out), 0x5A, n * kKnownRows * sizeof(std::uint64_t));
    EVK_CUDA(cudaMemsetAsync(pos_, 0xA5, n * kKnownRows * sizeof(std::uint64_t), stream_));
  }
  EVK_CUDA(cudaEventRecord(ev_[0], stream_));
  EVK_CUDA(cudaMemcpyAsync(kl_, kl, n * 2 * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_));
  const std::uint32_t* occ = bwt_.data();
  SaConsts c = consts_;
  const std::uint64_t* sa = sa_->data();
  const std::uint64_t* kl_dev = kl_;
  auto n_entries = static_cast<unsigned>(n);
  std::uint64_t* out_dev = pos_;
  void* args[] = {&occ, &c, &sa, &kl_dev, &n_entries, &out_dev};
  constexpr unsigned kBlock = 256;
  const std::size_t threads = n * kKnownRows;  // the kernel: 4 threads per (k, l)
  launch(kernel_, dim3(static_cast<unsigned>((threads + kBlock - 1) / kBlock)), dim3(kBlock), args, 0, stream_);
  EVK_CUDA_LAST();
  EVK_CUDA(cudaMemcpyAsync(out, pos_, n * kKnownRows * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream_));
  EVK_CUDA(cudaEventRecord(ev_[1], stream_));
  EVK_CUDA(cudaStreamSynchronize(stream_));
  std::memcpy(pos.data(), out, n * kKnownRows * sizeof(std::uint64_t));
  float ms = 0;
  EVK_CUDA(cudaEventElapsedTime(&ms, ev_[0], ev_[1]));
  return ms;
}

#endif

}  // namespace evk::barracuda_exact

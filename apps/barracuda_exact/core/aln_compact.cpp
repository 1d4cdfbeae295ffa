#if defined(EVK_HAVE_CUDA)
#include "core/aln_compact.hpp"

#include <stdexcept>

#include "evk/cuda_check.hpp"
#include "evk_kernels/barracuda_aln_compact.hpp"

namespace evk::barracuda_exact {

namespace {
// mirror core/aln_compact.cu's launch shapes
constexpr unsigned kTileThreads = 256, kTileItems = 8, kSumsThreads = 256, kGatherThreads = 256;
constexpr std::size_t kTile = std::size_t{kTileThreads} * kTileItems;
}  // namespace

AlnCompactor::AlnCompactor() {
  const KernelImage& img = barracuda_aln_compact();
  if (img.fatbin_size == 0) throw std::runtime_error("inexact GPU backend: built without the compaction kernels' fatbin");
  lib_ = CudaLibrary(img.fatbin);
  tiles_ = lib_.kernel("compact_tiles");
  sums_ = lib_.kernel("compact_sums");
  gather_ = lib_.kernel("compact_gather");
}

AlnCompactor::~AlnCompactor() {
  cudaFree(offsets_);
  cudaFree(tile_sums_);
}

void AlnCompactor::run(const std::uint32_t* n_out, const std::uint64_t* aln_out, std::size_t n, int aln_cap,
                       std::uint64_t* packed, std::uint64_t* total, cudaStream_t s) {
  if (aln_cap < 1) throw std::invalid_argument("AlnCompactor: aln_cap must be positive");
  if (n == 0) {
    EVK_CUDA(cudaMemsetAsync(total, 0, sizeof(std::uint64_t), s));
    return;
  }
  const std::size_t tiles = (n + kTile - 1) / kTile;
  const std::size_t gather_blocks = (n + kGatherThreads - 1) / kGatherThreads;
  if (gather_blocks > 0x7fffffffu) throw std::runtime_error("AlnCompactor: batch too large");
  if (n > cap_reads_) {
    EVK_CUDA(cudaFree(offsets_));
    offsets_ = nullptr;
    cap_reads_ = 0;
    EVK_CUDA(cudaMalloc(&offsets_, n * sizeof(std::uint64_t)));
    cap_reads_ = n;
  }
  if (tiles > cap_tiles_) {
    EVK_CUDA(cudaFree(tile_sums_));
    tile_sums_ = nullptr;
    cap_tiles_ = 0;
    EVK_CUDA(cudaMalloc(&tile_sums_, tiles * sizeof(std::uint64_t)));
    cap_tiles_ = tiles;
  }
  unsigned long long n64 = n, tiles64 = tiles;
  unsigned cap = static_cast<unsigned>(aln_cap);
  {
    void* args[] = {&n_out, &n64, &cap, &offsets_, &tile_sums_};
    launch(tiles_, dim3(static_cast<unsigned>(tiles)), dim3(kTileThreads), args, 0, s);
    EVK_CUDA_LAST();
  }
  {
    void* args[] = {&tile_sums_, &tiles64, &total};
    launch(sums_, dim3(1), dim3(kSumsThreads), args, 0, s);
    EVK_CUDA_LAST();
  }
  {
    void* args[] = {&n_out, &n64, &cap, &offsets_, &tile_sums_, &aln_out, &packed};
    launch(gather_, dim3(static_cast<unsigned>(gather_blocks)), dim3(kGatherThreads), args, 0, s);
    EVK_CUDA_LAST();
  }
}

}  // namespace evk::barracuda_exact
#endif

// GPU backend of the exact matcher: the BWT resident on the device, reads uploaded per batch, the
// kernel (embedded fatbin for the default configuration, NVRTC through evk::CompileCache for any
// other) launched by launch_exact, the one launch path shared with the GI problem.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/hits.hpp"
#include "core/index.hpp"
#include "core/kernel_config.hpp"
#include "core/match.hpp"
#include "evk/cuda_library.hpp"

namespace evk::barracuda_exact {

struct BwtConsts {  // mirrors the kernel's bwt_consts
  std::uint64_t primary, seq_len;
  std::uint64_t L2[5];
};
BwtConsts bwt_consts(const BwtIndex& idx);

// Device pointers of one launch.
struct ExactArgs {
  const std::uint32_t* bwt = nullptr;
  BwtConsts consts{};
  const std::uint32_t* seqs = nullptr;
  cudaTextureObject_t seqs_tex = 0;
  const std::uint32_t* seq_index = nullptr;
  const std::uint32_t* seq_lens = nullptr;
  std::uint32_t stride = 1;
  std::uint32_t n_seqs = 0;
  std::uint64_t* kl = nullptr;  // 2 per read
};

// Enqueues the kernel over all reads with the geometry of cfg (BLOCK_W, threads per query;
// without many_blocks the grid is split into launches of at most 65535 blocks).
void launch_exact(cudaKernel_t kernel, const gi::Config& cfg, const ExactArgs& a, cudaStream_t s);

// Loads the kernel for cfg on the current device: the embedded fatbin for the original source with
// the default config, else NVRTC (cached) of `source` (empty: the original text; an evolved variant's
// patched text from resolve_kernel_variant) with kernel_compile_options(cfg). Throws InputError for
// an illegal config, std::runtime_error on compile failure.
// origin (optional): "embedded fatbin", "embedded fatbin (ID)" for a shipped evolved variant, or "NVRTC ...".
CudaLibrary load_exact_kernel(const gi::Config& cfg, int cc, const std::string& source = {}, std::string* origin = nullptr);
// The NVRTC request load_exact_kernel compiles (the build compiles shipped evolved variants from the
// same request; an identical request loads their embedded fatbin).
NvrtcRequest exact_kernel_request(const gi::Config& cfg, int cc, const std::string& source = {});

// The BWT occurrence array on the device (padded so whole-block loads stay in bounds).
class DeviceBwt {
 public:
  explicit DeviceBwt(const BwtIndex& idx);
  ~DeviceBwt();
  DeviceBwt(const DeviceBwt&) = delete;
  DeviceBwt& operator=(const DeviceBwt&) = delete;
  const std::uint32_t* data() const { return d_; }
  const BwtConsts& consts() const { return c_; }
  std::size_t bytes() const { return bytes_; }

 private:
  std::uint32_t* d_ = nullptr;
  std::size_t bytes_ = 0;
  BwtConsts c_{};
};

// Device buffers for batches of packed reads (grown on demand) with a texture over the words.
class DeviceReads {
 public:
  DeviceReads() = default;
  ~DeviceReads();
  DeviceReads(const DeviceReads&) = delete;
  DeviceReads& operator=(const DeviceReads&) = delete;
  void upload(const PackedReads& r, cudaStream_t s);  // async from r's memory: keep r alive until synced
  // The same from raw host arrays (pinned memory for a truly asynchronous copy): n reads of
  // `stride` words, laid out as pack_reads does (words of ((n + 31) / 32) * 32 * stride).
  void upload(const std::uint32_t* words, const std::uint32_t* index, const std::uint32_t* lens, std::size_t n,
              std::uint32_t stride, cudaStream_t s);
  void fill_args(ExactArgs& a) const;
  std::uint64_t* kl() const { return kl_; }

 private:
  void release();
  std::uint32_t *words_ = nullptr, *index_ = nullptr, *lens_ = nullptr;
  std::uint64_t* kl_ = nullptr;
  std::size_t cap_words_ = 0, cap_reads_ = 0;
  cudaTextureObject_t tex_ = 0;
  std::uint32_t stride_ = 1, n_ = 0;
};

// Timings of one batch (milliseconds).
struct GpuBatchTimes {
  double upload_ms = 0, kernel_ms = 0, download_ms = 0;
  double lookup_ms = 0;  // GpuStream: the sa_lookup kernel
};

struct SaConsts {  // mirrors core/sa_lookup.cu
  std::uint64_t primary, seq_len;
  std::uint64_t L2[5];
  std::uint64_t sa_intv;
};

// Matches batches on one GPU with one kernel configuration.
class GpuMatcher {
 public:
  // source: as for load_exact_kernel (empty: the original kernel).
  GpuMatcher(const BwtIndex& idx, const gi::Config& cfg, int device, const std::string& source = {});
  ~GpuMatcher();
  GpuMatcher(const GpuMatcher&) = delete;
  GpuMatcher& operator=(const GpuMatcher&) = delete;
  std::vector<KL> match(const PackedReads& reads, GpuBatchTimes* times = nullptr);
  const std::string& origin() const { return origin_; }  // where the kernel was loaded from

 private:
  gi::Config cfg_;
  std::string origin_;
  DeviceBwt bwt_;
  DeviceReads reads_;
  CudaLibrary lib_;
  cudaKernel_t kernel_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_[4] = {};
};

// A GPU ready to match: the BWT resident and the kernel of one configuration loaded. Shared by
// the streams (GpuStream) that feed it batches concurrently.
// With sa_lookup, the sampled suffix array is resident too and the streams also turn the SA rows
// of each hit into text positions on the GPU (core/sa_lookup.cu, as BwtIndex::sa_at).
class GpuDevice {
 public:
  GpuDevice(const BwtIndex& idx, const gi::Config& cfg, int device, const std::string& source = {},
            bool sa_lookup = true);
  ~GpuDevice();
  GpuDevice(const GpuDevice&) = delete;
  GpuDevice& operator=(const GpuDevice&) = delete;
  int device() const { return device_; }
  bool sa_lookup() const { return sa_ != nullptr; }
  const std::string& origin() const { return origin_; }  // where the kernel was loaded from

 private:
  friend class GpuStream;
  int device_;
  gi::Config cfg_;
  std::string origin_;
  DeviceBwt bwt_;
  CudaLibrary lib_;
  cudaKernel_t kernel_ = nullptr;
  std::uint64_t* sa_ = nullptr;
  SaConsts sa_consts_{};
  CudaLibrary sa_lib_;
  cudaKernel_t sa_kernel_ = nullptr;
};

// Page-locked host memory (grown on demand; contents are not kept when it grows).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* reserve(std::size_t bytes);
  void* data() const { return p_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// One stream of a GpuDevice with its own pinned staging and device buffers: several of them (one
// per pipeline lane, each driven by its own host thread) keep transfers of one batch overlapped
// with the kernel of another and with the host's packing and hit resolution.
class GpuStream {
 public:
  explicit GpuStream(const GpuDevice& dev);
  ~GpuStream();
  GpuStream(const GpuStream&) = delete;
  GpuStream& operator=(const GpuStream&) = delete;
  // Pinned staging for n reads of `stride` words (see pack_reads_range): the packed words and the
  // read lengths, to be filled by the caller before run().
  void reserve(std::size_t n, std::uint32_t stride);
  std::uint32_t* host_words() const { return static_cast<std::uint32_t*>(words_.data()); }
  std::uint32_t* host_lens() const { return static_cast<std::uint32_t*>(lens_.data()); }
  // Uploads the staged batch, runs the kernel (and sa_lookup), copies (k, l) (and the positions)
  // back; returns when all is done. The results stay valid until the next reserve()/run().
  const KL* run(std::size_t n, std::uint32_t stride, GpuBatchTimes* times = nullptr);
  // After run() on a device with sa_lookup: kSaRowsPerHit text positions per read (resolve_hit's
  // sa_rows: the rows k .. k + min(count, 4) - 1, or k alone beyond 4 hits); else nullptr.
  const std::uint64_t* sa_rows() const;
  bool poison_outputs = false;  // tests: fill the device and host results with a pattern first

 private:
  const GpuDevice& dev_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_[5] = {};
  DeviceReads reads_;
  PinnedBuffer words_, index_, lens_, kl_, sa_host_;
  std::uint64_t* sa_dev_ = nullptr;
  std::size_t sa_cap_ = 0;
};

}  // namespace evk::barracuda_exact
#endif

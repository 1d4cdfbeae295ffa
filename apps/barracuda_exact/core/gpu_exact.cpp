#if defined(EVK_HAVE_CUDA)
#include "core/gpu_exact.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "evk/gi/genome.hpp"
#include "evk/cuda_check.hpp"
#include "evk/embedded.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"
#include "evk_kernels/barracuda_sa_lookup.hpp"

namespace evk::barracuda_exact {

BwtConsts bwt_consts(const BwtIndex& idx) {
  BwtConsts c{};
  c.primary = idx.primary;
  c.seq_len = idx.seq_len;
  for (int i = 0; i < 5; ++i) c.L2[i] = idx.L2[i];
  return c;
}

void launch_exact(cudaKernel_t kernel, const gi::Config& cfg, const ExactArgs& a, cudaStream_t s) {
  if (a.n_seqs == 0) return;
  const KernelGeometry g = kernel_geometry(cfg);
  const std::uint64_t per_block = static_cast<std::uint64_t>(g.block_w / g.threads_per_seq);
  const std::uint64_t blocks = (a.n_seqs + per_block - 1) / per_block;
  constexpr std::uint64_t kMaxX = 65535;
  ExactArgs v = a;
  std::uint32_t first = 0;
  void* args[] = {&v.bwt, &v.consts, &v.seqs, &v.seqs_tex, &v.seq_index, &v.seq_lens, &v.stride, &v.n_seqs, &first, &v.kl};
  if (g.many_blocks) {
    const dim3 grid(static_cast<unsigned>(std::min(blocks, kMaxX)), static_cast<unsigned>((blocks + kMaxX - 1) / kMaxX));
    launch(kernel, grid, dim3(static_cast<unsigned>(g.block_w)), args, 0, s);
    EVK_CUDA_LAST();
    return;
  }
  for (std::uint64_t b0 = 0; b0 < blocks; b0 += kMaxX) {
    first = static_cast<std::uint32_t>(b0 * per_block);
    launch(kernel, dim3(static_cast<unsigned>(std::min(kMaxX, blocks - b0))), dim3(static_cast<unsigned>(g.block_w)), args,
           0, s);
    EVK_CUDA_LAST();
  }
}

NvrtcRequest exact_kernel_request(const gi::Config& cfg, int cc, const std::string& source) {
  const KernelImage& img = barracuda_exact_kernel();
  NvrtcRequest req;
  req.source = source.empty() ? std::string(img.text()) : source;
  req.name = source.empty() ? "barracuda_exact.cu" : "barracuda_exact_evolved.cu";
  req.options = kernel_compile_options(cfg);  // validates
  for (auto& o : gi::source_nvrtc_options(req.source)) req.options.push_back(o);  // a genome's option genes
  req.cc = cc;
  return req;
}

CudaLibrary load_exact_kernel(const gi::Config& cfg, int cc, const std::string& source, std::string* origin) {
  const KernelImage& img = barracuda_exact_kernel();
  const NvrtcRequest req = exact_kernel_request(cfg, cc, source);  // validates cfg
  auto said = [&](const std::string& o) {
    if (origin) *origin = o;
  };
  if (source.empty() && is_default_config(cfg) && img.fatbin_size > 0) {
    said("embedded fatbin");
    return CudaLibrary(img.fatbin);
  }
  if (const EmbeddedVariant* e = find_embedded_variant(req.source, req.options)) {
    said(std::string("embedded fatbin (") + e->id + ")");
    return CudaLibrary(e->fatbin);
  }
  NvrtcResult r = CompileCache().compile(req);
  if (!r.ok) throw std::runtime_error("NVRTC failed for the barracuda_exact kernel: " + r.log);
  said("NVRTC sm_" + std::to_string(cc) + (r.log == "(cached)" ? " (cached)" : ""));
  return CudaLibrary(r.cubin.data());
}

DeviceBwt::DeviceBwt(const BwtIndex& idx) : c_(bwt_consts(idx)) {
  bytes_ = (idx.occ.size() + kBlockWords) * 4;
  EVK_CUDA(cudaMalloc(&d_, bytes_));
  EVK_CUDA(cudaMemset(d_, 0, bytes_));
  EVK_CUDA(cudaMemcpy(d_, idx.occ.data(), idx.occ.size() * 4, cudaMemcpyHostToDevice));
}
DeviceBwt::~DeviceBwt() { cudaFree(d_); }

DeviceReads::~DeviceReads() { release(); }

void DeviceReads::release() {
  if (tex_) cudaDestroyTextureObject(tex_);
  cudaFree(words_);
  cudaFree(index_);
  cudaFree(lens_);
  cudaFree(kl_);
  tex_ = 0;
  words_ = index_ = lens_ = nullptr;
  kl_ = nullptr;
  cap_words_ = cap_reads_ = 0;
}

void DeviceReads::upload(const PackedReads& r, cudaStream_t s) {
  upload(r.words.data(), r.index.data(), r.len.data(), r.size(), r.stride, s);
}

void DeviceReads::upload(const std::uint32_t* words, const std::uint32_t* index, const std::uint32_t* lens, std::size_t n,
                         std::uint32_t stride, cudaStream_t s) {
  const std::size_t words_n = (n + 31) / 32 * 32 * stride;
  const std::size_t nw = std::max<std::size_t>(words_n, 32), nr = std::max<std::size_t>(n, 1);
  if (nw > (1u << 27)) throw std::runtime_error("read batch too large for a 1-D texture");
  if (nw > cap_words_ || nr > cap_reads_) {
    EVK_CUDA(cudaStreamSynchronize(s));
    release();
    cap_words_ = nw + nw / 4;
    cap_reads_ = nr + nr / 4;
    EVK_CUDA(cudaMalloc(&words_, cap_words_ * 4));
    EVK_CUDA(cudaMalloc(&index_, cap_reads_ * 4));
    EVK_CUDA(cudaMalloc(&lens_, cap_reads_ * 4));
    EVK_CUDA(cudaMalloc(&kl_, cap_reads_ * 16));
    cudaResourceDesc rd{};
    rd.resType = cudaResourceTypeLinear;
    rd.res.linear.devPtr = words_;
    rd.res.linear.desc = cudaCreateChannelDesc<unsigned int>();
    rd.res.linear.sizeInBytes = cap_words_ * 4;
    cudaTextureDesc td{};
    td.readMode = cudaReadModeElementType;
    EVK_CUDA(cudaCreateTextureObject(&tex_, &rd, &td, nullptr));
  }
  EVK_CUDA(cudaMemcpyAsync(words_, words, words_n * 4, cudaMemcpyHostToDevice, s));
  EVK_CUDA(cudaMemcpyAsync(index_, index, n * 4, cudaMemcpyHostToDevice, s));
  EVK_CUDA(cudaMemcpyAsync(lens_, lens, n * 4, cudaMemcpyHostToDevice, s));
  stride_ = stride;
  n_ = static_cast<std::uint32_t>(n);
}

void DeviceReads::fill_args(ExactArgs& a) const {
  a.seqs = words_;
  a.seqs_tex = tex_;
  a.seq_index = index_;
  a.seq_lens = lens_;
  a.stride = stride_;
  a.n_seqs = n_;
  a.kl = kl_;
}

GpuMatcher::GpuMatcher(const BwtIndex& idx, const gi::Config& cfg, int device, const std::string& source)
    : cfg_(validate_kernel_config(cfg)), bwt_((EVK_CUDA(cudaSetDevice(device)), idx)) {
  int major = 0, minor = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  EVK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  lib_ = load_exact_kernel(cfg_, major * 10 + minor, source, &origin_);
  kernel_ = lib_.kernel(kKernelEntry);
  EVK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (auto& e : ev_) EVK_CUDA(cudaEventCreate(&e));
}

GpuMatcher::~GpuMatcher() {
  for (auto& e : ev_) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

std::vector<KL> GpuMatcher::match(const PackedReads& reads, GpuBatchTimes* times) {
  std::vector<KL> out(reads.size());
  if (reads.size() == 0) return out;
  EVK_CUDA(cudaEventRecord(ev_[0], stream_));
  reads_.upload(reads, stream_);
  EVK_CUDA(cudaEventRecord(ev_[1], stream_));
  ExactArgs a;
  a.bwt = bwt_.data();
  a.consts = bwt_.consts();
  reads_.fill_args(a);
  launch_exact(kernel_, cfg_, a, stream_);
  EVK_CUDA(cudaEventRecord(ev_[2], stream_));
  static_assert(sizeof(KL) == 16);
  EVK_CUDA(cudaMemcpyAsync(out.data(), reads_.kl(), reads.size() * 16, cudaMemcpyDeviceToHost, stream_));
  EVK_CUDA(cudaEventRecord(ev_[3], stream_));
  EVK_CUDA(cudaStreamSynchronize(stream_));
  if (times) {
    float ms = 0;
    cudaEventElapsedTime(&ms, ev_[0], ev_[1]);
    times->upload_ms += ms;
    cudaEventElapsedTime(&ms, ev_[1], ev_[2]);
    times->kernel_ms += ms;
    cudaEventElapsedTime(&ms, ev_[2], ev_[3]);
    times->download_ms += ms;
  }
  return out;
}

GpuDevice::GpuDevice(const BwtIndex& idx, const gi::Config& cfg, int device, const std::string& source, bool sa_lookup)
    : device_(device), cfg_(validate_kernel_config(cfg)), bwt_((EVK_CUDA(cudaSetDevice(device)), idx)) {
  int major = 0, minor = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  EVK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  lib_ = load_exact_kernel(cfg_, major * 10 + minor, source, &origin_);
  kernel_ = lib_.kernel(kKernelEntry);
  if (!sa_lookup || idx.sa.empty()) return;
  if (idx.sa_intv == 0 || (idx.sa_intv & (idx.sa_intv - 1)) != 0)
    throw std::runtime_error("sa_lookup needs a power-of-two SA interval");
  const KernelImage& img = barracuda_sa_lookup();
  if (img.fatbin_size == 0) return;  // built without the fatbin: positions are looked up on the CPU
  sa_lib_ = CudaLibrary(img.fatbin);
  sa_kernel_ = sa_lib_.kernel("sa_lookup");
  sa_consts_.primary = idx.primary;
  sa_consts_.seq_len = idx.seq_len;
  for (int i = 0; i < 5; ++i) sa_consts_.L2[i] = idx.L2[i];
  sa_consts_.sa_intv = idx.sa_intv;
  EVK_CUDA(cudaMalloc(&sa_, idx.sa.size() * sizeof(std::uint64_t)));
  EVK_CUDA(cudaMemcpy(sa_, idx.sa.data(), idx.sa.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
}

GpuDevice::~GpuDevice() {
  if (sa_) {
    cudaSetDevice(device_);
    cudaFree(sa_);
  }
}

PinnedBuffer::~PinnedBuffer() {
  if (p_) cudaFreeHost(p_);
}

void* PinnedBuffer::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return p_;
  if (p_) EVK_CUDA(cudaFreeHost(p_));
  p_ = nullptr;
  bytes_ = 0;
  const std::size_t want = bytes + bytes / 4;
  EVK_CUDA(cudaHostAlloc(&p_, want, cudaHostAllocPortable));
  bytes_ = want;
  return p_;
}

GpuStream::GpuStream(const GpuDevice& dev) : dev_(dev) {
  EVK_CUDA(cudaSetDevice(dev_.device_));
  EVK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (auto& e : ev_) EVK_CUDA(cudaEventCreate(&e));
}

GpuStream::~GpuStream() {
  cudaSetDevice(dev_.device_);
  if (stream_) cudaStreamSynchronize(stream_);
  cudaFree(sa_dev_);
  for (auto& e : ev_) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

const std::uint64_t* GpuStream::sa_rows() const {
  return dev_.sa_lookup() ? static_cast<const std::uint64_t*>(sa_host_.data()) : nullptr;
}

void GpuStream::reserve(std::size_t n, std::uint32_t stride) {
  EVK_CUDA(cudaSetDevice(dev_.device_));
  EVK_CUDA(cudaStreamSynchronize(stream_));  // the previous batch's copies are done with the buffers
  const std::size_t nr = std::max<std::size_t>(n, 1);
  words_.reserve((nr + 31) / 32 * 32 * stride * 4);
  auto* index = static_cast<std::uint32_t*>(index_.reserve(nr * 4));
  lens_.reserve(nr * 4);
  kl_.reserve(nr * sizeof(KL));
  if (dev_.sa_lookup()) {
    sa_host_.reserve(nr * kSaRowsPerHit * sizeof(std::uint64_t));
    if (nr > sa_cap_) {
      cudaFree(sa_dev_);
      sa_dev_ = nullptr;
      sa_cap_ = 0;
      EVK_CUDA(cudaMalloc(&sa_dev_, (nr + nr / 4) * kSaRowsPerHit * sizeof(std::uint64_t)));
      sa_cap_ = nr + nr / 4;
    }
  }
  for (std::size_t r = 0; r < n; ++r) index[r] = static_cast<std::uint32_t>((r / 32) * stride * 32 + r % 32);
}

const KL* GpuStream::run(std::size_t n, std::uint32_t stride, GpuBatchTimes* times) {
  static_assert(sizeof(KL) == 16);
  auto* kl = static_cast<KL*>(kl_.data());
  if (n == 0) return kl;
  EVK_CUDA(cudaSetDevice(dev_.device_));
  if (poison_outputs) std::memset(static_cast<void*>(kl), 0x5A, n * sizeof(KL));
  EVK_CUDA(cudaEventRecord(ev_[0], stream_));
  reads_.upload(host_words(), static_cast<const std::uint32_t*>(index_.data()), host_lens(), n, stride, stream_);
  if (poison_outputs) EVK_CUDA(cudaMemsetAsync(reads_.kl(), 0xA5, n * sizeof(KL), stream_));
  EVK_CUDA(cudaEventRecord(ev_[1], stream_));
  ExactArgs a;
  a.bwt = dev_.bwt_.data();
  a.consts = dev_.bwt_.consts();
  reads_.fill_args(a);
  launch_exact(dev_.kernel_, dev_.cfg_, a, stream_);
  EVK_CUDA(cudaEventRecord(ev_[2], stream_));
  auto* sa_host = static_cast<std::uint64_t*>(sa_host_.data());
  const std::size_t sa_n = n * kSaRowsPerHit;
  if (dev_.sa_lookup()) {
    if (poison_outputs) {
      std::memset(static_cast<void*>(sa_host), 0x5A, sa_n * sizeof(std::uint64_t));
      EVK_CUDA(cudaMemsetAsync(sa_dev_, 0xA5, sa_n * sizeof(std::uint64_t), stream_));
    }
    const std::uint32_t* occ = dev_.bwt_.data();
    SaConsts c = dev_.sa_consts_;
    const std::uint64_t* sa = dev_.sa_;
    const std::uint64_t* kl_dev = reads_.kl();
    auto n_reads = static_cast<unsigned>(n);
    std::uint64_t* out = sa_dev_;
    void* args[] = {&occ, &c, &sa, &kl_dev, &n_reads, &out};
    constexpr unsigned kBlock = 256;
    launch(dev_.sa_kernel_, dim3(static_cast<unsigned>((sa_n + kBlock - 1) / kBlock)), dim3(kBlock), args, 0, stream_);
    EVK_CUDA_LAST();
  }
  EVK_CUDA(cudaEventRecord(ev_[3], stream_));
  EVK_CUDA(cudaMemcpyAsync(kl, reads_.kl(), n * sizeof(KL), cudaMemcpyDeviceToHost, stream_));
  if (dev_.sa_lookup())
    EVK_CUDA(cudaMemcpyAsync(sa_host, sa_dev_, sa_n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream_));
  EVK_CUDA(cudaEventRecord(ev_[4], stream_));
  EVK_CUDA(cudaStreamSynchronize(stream_));
  if (times) {
    float ms = 0;
    EVK_CUDA(cudaEventElapsedTime(&ms, ev_[0], ev_[1]));
    times->upload_ms += ms;
    EVK_CUDA(cudaEventElapsedTime(&ms, ev_[1], ev_[2]));
    times->kernel_ms += ms;
    EVK_CUDA(cudaEventElapsedTime(&ms, ev_[2], ev_[3]));
    times->lookup_ms += ms;
    EVK_CUDA(cudaEventElapsedTime(&ms, ev_[3], ev_[4]));
    times->download_ms += ms;
  }
  return kl;
}

}  // namespace evk::barracuda_exact
#endif

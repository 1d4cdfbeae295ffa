#if defined(EVK_HAVE_CUDA)
#include "core/gpu_exact.hpp"

#include <algorithm>
#include <stdexcept>

#include "evk/gi/genome.hpp"
#include "evk/cuda_check.hpp"
#include "evk/embedded.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"

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
  const std::size_t nw = std::max<std::size_t>(r.words.size(), 32), nr = std::max<std::size_t>(r.size(), 1);
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
  EVK_CUDA(cudaMemcpyAsync(words_, r.words.data(), r.words.size() * 4, cudaMemcpyHostToDevice, s));
  EVK_CUDA(cudaMemcpyAsync(index_, r.index.data(), r.size() * 4, cudaMemcpyHostToDevice, s));
  EVK_CUDA(cudaMemcpyAsync(lens_, r.len.data(), r.size() * 4, cudaMemcpyHostToDevice, s));
  stride_ = r.stride;
  n_ = static_cast<std::uint32_t>(r.size());
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

}  // namespace evk::barracuda_exact
#endif

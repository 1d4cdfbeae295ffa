#include "core/affine/gpu_affine.hpp"
#if defined(EVK_HAVE_CUDA)
#include <chrono>
#include <cstring>

#include "core/gpu_pyramid.hpp"
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk_kernels/reg_deform_affine.hpp"

namespace evk::reg_deform::gpu {

static_assert(sizeof(BlockMatch) == 2 * sizeof(float4), "BlockMatch must match the kernel's Match (32 bytes)");

namespace {
struct Affine34d {  // = the kernel's Affine34d: the voxel map in double, as the CPU uses it
  double m[12];
};
Affine34d affine34(const Mat44& a) {
  Affine34d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) r.m[i * 4 + j] = a.m[i][j];
  return r;
}
struct AffineKernels {
  CudaLibrary lib;
  cudaKernel_t warp, match;
  AffineKernels() : lib(reg_deform_affine().fatbin) {
    warp = lib.kernel("aff_warp_linear");
    match = lib.kernel("aff_match_blocks");
  }
};
const AffineKernels& kernels() {
  static AffineKernels k;  // loaded into the device current at first use
  return k;
}
constexpr unsigned kMatchThreads = 352;  // AFF_THREADS in affine_kernels.cu
}  // namespace

BlockMatcher::BlockMatcher(const Volume& ref, const Mask& rmask, const BlockLayout& layout, const Volume& flo)
    : BlockMatcher(LevelImage{&ref, nullptr}, rmask, layout, LevelImage{&flo, nullptr}) {}

BlockMatcher::BlockMatcher(const LevelImage& ref_level, const Mask& rmask, const BlockLayout& layout,
                           const LevelImage& flo_level)
    : ref_geo_(ref_level.host->geo), flo_geo_(flo_level.host->geo), layout_(layout) {
  const Volume& ref = *ref_level.host;
  const Volume& flo = *flo_level.host;
  if (ref_level.device) {
    ref_ = static_cast<const float*>(ref_level.device);
  } else {
    ref_own_.upload(ref.data.data(), ref.data.size());
    ref_ = ref_own_.get();
  }
  if (flo_level.device) {
    flo_ = static_cast<const float*>(flo_level.device);
  } else {
    flo_own_.upload(flo.data.data(), flo.data.size());
    flo_ = flo_own_.get();
  }
  warped_.resize(ref.geo.voxels());
  has_mask_ = !rmask.empty();
  if (has_mask_) mask_.upload(rmask.data(), rmask.size());
  std::vector<std::uint32_t> act(layout.active.begin(), layout.active.end());
  active_.upload(act.data(), act.size());
  out_.resize(2 * std::max<std::size_t>(1, act.size()));  // two float4 per match
  for (auto& e : ev_) EVK_CUDA(cudaEventCreate(&e));
  EVK_CUDA(cudaStreamSynchronize(nullptr));
}

BlockMatcher::~BlockMatcher() {
  for (auto e : ev_)
    if (e) cudaEventDestroy(e);  // no throwing from a destructor
}

void BlockMatcher::add_times(AffineStageTimes& t) const {
  t.warp += warp_ms_;
  t.match += match_ms_;
  t.download += download_ms_;
}

void BlockMatcher::warp(const Mat44& ref2flo) {
  const std::size_t n = ref_geo_.voxels();
  if (poison_) EVK_CUDA(cudaMemset(warped_.get(), 0xff, n * sizeof(float)));
  const Affine34d a = affine34(voxel_map(ref_geo_, flo_geo_, ref2flo));
  const float* pf = flo_;
  float* pw = warped_.get();
  int fx = flo_geo_.nx, fy = flo_geo_.ny, fz = flo_geo_.nz, nx = ref_geo_.nx, ny = ref_geo_.ny, nz = ref_geo_.nz;
  void* args[] = {&pf, &fx, &fy, &fz, &nx, &ny, &nz, const_cast<Affine34d*>(&a), &pw};
  launch(kernels().warp, dim3(static_cast<unsigned>((n + 255) / 256)), dim3(256), args);
  EVK_CUDA_LAST();
}

void BlockMatcher::set_warped(const std::vector<float>& warped) {
  if (warped.size() != ref_geo_.voxels()) throw std::invalid_argument("set_warped: size");
  warped_.upload(warped.data(), warped.size());
}

std::vector<float> BlockMatcher::download_warped() const {
  std::vector<float> w(ref_geo_.voxels());
  warped_.download(w.data(), w.size());
  return w;
}

void BlockMatcher::enqueue_match() {
  const int count = static_cast<int>(layout_.active.size());
  if (count == 0) return;
  if (poison_) EVK_CUDA(cudaMemset(out_.get(), 0xff, count * sizeof(BlockMatch)));
  const float* pr = ref_;
  const std::uint8_t* pm = has_mask_ ? mask_.get() : nullptr;
  const float* pw = warped_.get();
  const std::uint32_t* pa = active_.get();
  float4* po = out_.get();
  int nx = ref_geo_.nx, ny = ref_geo_.ny, nz = ref_geo_.nz, bx = layout_.bx, by = layout_.by, c = count;
  void* args[] = {&pr, &pm, &pw, &nx, &ny, &nz, &bx, &by, &pa, &c, &po};
  launch(kernels().match, dim3(static_cast<unsigned>(count)), dim3(kMatchThreads), args);
  EVK_CUDA_LAST();
}

std::vector<BlockMatch> BlockMatcher::download_matches() const {
  std::vector<BlockMatch> m(layout_.active.size());
  if (!m.empty()) out_.download(reinterpret_cast<float4*>(m.data()), 2 * m.size());
  return m;
}

std::vector<BlockMatch> BlockMatcher::match_warped() {
  enqueue_match();
  return download_matches();
}

std::vector<BlockMatch> BlockMatcher::match(const Mat44& ref2flo) {
  EVK_CUDA(cudaEventRecord(ev_[0], nullptr));
  warp(ref2flo);
  EVK_CUDA(cudaEventRecord(ev_[1], nullptr));
  enqueue_match();
  EVK_CUDA(cudaEventRecord(ev_[2], nullptr));
  EVK_CUDA(cudaEventSynchronize(ev_[2]));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<BlockMatch> m = download_matches();
  download_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float a = 0, b = 0;
  EVK_CUDA(cudaEventElapsedTime(&a, ev_[0], ev_[1]));
  EVK_CUDA(cudaEventElapsedTime(&b, ev_[1], ev_[2]));
  warp_ms_ += a;
  match_ms_ += b;
  return m;
}

MatcherFactory affine_matcher(bool poison) {
  return [poison](const LevelImage& ref, const Mask& rmask, const BlockLayout& layout, const LevelImage& flo) {
    auto m = std::make_unique<BlockMatcher>(ref, rmask, layout, flo);
    m->set_poison(poison);
    return std::unique_ptr<Matcher>(std::move(m));
  };
}

AffineEngine affine_engine(bool poison) {
  return AffineEngine(affine_matcher(poison), [](const Volume& v, int levels, int used) {
    return gpu::make_image_pyramid(v, levels, used);
  });
}

}  // namespace evk::reg_deform::gpu
#endif

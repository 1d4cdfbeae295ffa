#include "core/gpu_pyramid.hpp"
#if defined(EVK_HAVE_CUDA)
#include <memory>
#include <stdexcept>

#include "core/field/gpu_field.hpp"
#include "core/pyramid.hpp"
#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk_kernels/reg_deform_pyramid.hpp"

namespace evk::reg_deform::gpu {

namespace {
constexpr int kMaxTaps = 15;  // PYR_MAX_TAPS in pyramid_kernels.cu
struct PyrKernel {            // = the kernel's PyrKernel
  double w[kMaxTaps];
  int radius;
};
struct PyramidKernels {
  CudaLibrary lib;
  cudaKernel_t init, smooth, finish;
  PyramidKernels() : lib(reg_deform_pyramid().fatbin) {
    init = lib.kernel("pyr_init");
    smooth = lib.kernel("pyr_smooth");
    finish = lib.kernel("pyr_finish");
  }
};
const PyramidKernels& kernels() {
  static PyramidKernels k;
  return k;
}
dim3 grid_for(unsigned long long n) { return dim3(static_cast<unsigned>((n + 255) / 256)); }

struct DevVolume {
  Geometry geo;
  Buffer<float> data;
};
// The smoothing's double buffers (value and weight, two of each), sized for the largest level.
struct Scratch {
  Buffer<double> val[2], den[2];
  explicit Scratch(std::size_t n) {
    for (int b = 0; b < 2; ++b) {
      val[b].resize(n);
      den[b].resize(n);
    }
  }
};

// pyramid.cpp's downsample_volume: smooth (val/den in double, axis by axis), divide, subsample.
DevVolume downsample(const DevVolume& in, const std::array<bool, 3>& axes, Scratch& s) {
  const Geometry& g = in.geo;
  unsigned long long n = g.voxels();
  if (s.val[0].size() < n) throw std::logic_error("pyramid: scratch too small");
  const PyramidKernels& k = kernels();
  {
    const float* pin = in.data.get();
    double* pv = s.val[0].get();
    double* pd = s.den[0].get();
    void* args[] = {&pin, &pv, &pd, &n};
    launch(k.init, grid_for(n), dim3(256), args);
    EVK_CUDA_LAST();
  }
  const std::vector<double> taps = gaussian_kernel(kPyramidSigma);
  if (taps.empty() || taps.size() > static_cast<std::size_t>(kMaxTaps)) throw std::logic_error("pyramid: kernel taps");
  PyrKernel pk{};
  for (std::size_t i = 0; i < taps.size(); ++i) pk.w[i] = taps[i];
  pk.radius = static_cast<int>(taps.size() / 2);
  int cur = 0, nx = g.nx, ny = g.ny, nz = g.nz;
  const int len[3] = {g.nx, g.ny, g.nz};
  for (int axis = 0; axis < 3; ++axis) {
    if (len[axis] <= 1) continue;  // as gaussian_smooth
    const double* vi = s.val[cur].get();
    const double* di = s.den[cur].get();
    double* vo = s.val[1 - cur].get();
    double* dout = s.den[1 - cur].get();
    int a = axis;
    void* args[] = {&vi, &di, &vo, &dout, &nx, &ny, &nz, &a, &pk};
    launch(k.smooth, grid_for(n), dim3(256), args);
    EVK_CUDA_LAST();
    cur = 1 - cur;
  }
  DevVolume r;
  r.geo = downsample_geometry(g, axes);
  unsigned long long rn = r.geo.voxels();
  r.data.resize(rn);
  int fx = axes[0] && g.nx > 1 ? 2 : 1, fy = axes[1] && g.ny > 1 ? 2 : 1, fz = axes[2] && g.nz > 1 ? 2 : 1;
  int rx = r.geo.nx, ry = r.geo.ny, rz = r.geo.nz;
  const double* pv = s.val[cur].get();
  const double* pd = s.den[cur].get();
  float* po = r.data.get();
  void* args[] = {&pv, &pd, &po, &nx, &ny, &rx, &ry, &rz, &fx, &fy, &fz};
  launch(k.finish, grid_for(rn), dim3(256), args);
  EVK_CUDA_LAST();
  return r;
}

// The device levels an ImagePyramid owns.
struct DeviceLevels {
  std::vector<DevVolume> levels;
};
}  // namespace

ImagePyramid make_image_pyramid(const Volume& v, int levels, int used) {
  if (levels < 1 || used < 1 || used > levels) throw std::invalid_argument("make_image_pyramid: need 1 <= used <= levels");
  auto dev = std::make_shared<DeviceLevels>();
  dev->levels.resize(used);
  DevVolume cur;
  cur.geo = v.geo;
  cur.data.upload(v.data.data(), v.data.size());
  {
    std::unique_ptr<Scratch> scratch;  // allocated once, at the first (largest) level's size
    auto down = [&](const DevVolume& in) {
      if (!scratch) scratch = std::make_unique<Scratch>(in.geo.voxels());
      return downsample(in, pyramid_axes(in.geo), *scratch);
    };
    for (int l = used; l < levels; ++l) cur = down(cur);
    dev->levels[used - 1] = std::move(cur);
    for (int l = used - 2; l >= 0; --l) dev->levels[l] = down(dev->levels[l + 1]);
  }  // the scratch buffers are freed here: cudaFree waits for the kernels that use them
  ImagePyramid p;
  p.levels.resize(used);
  for (int l = 0; l < used; ++l) {
    const DevVolume& d = dev->levels[l];
    p.levels[l].device = d.data.get();
    if (l == used - 1 && levels == used) {
      p.levels[l].host = &v;  // the input itself
      continue;
    }
    auto h = std::make_unique<Volume>();
    h->geo = d.geo;
    h->data.resize(d.geo.voxels());
    d.data.download(h->data.data(), h->data.size());
    p.levels[l].host = h.get();
    p.owned.push_back(std::move(h));
  }
  p.device = std::move(dev);
  return p;
}

std::vector<Volume> make_pyramid(const Volume& v, int levels, int used) {
  const ImagePyramid ip = gpu::make_image_pyramid(v, levels, used);
  std::vector<Volume> p;
  for (std::size_t l = 0; l < ip.size(); ++l) p.push_back(ip[l]);
  return p;
}

std::vector<float> download_level(const LevelImage& l) {
  if (!l.host || !l.device) throw std::invalid_argument("download_level: no device copy");
  std::vector<float> out(l.host->geo.voxels());
  EVK_CUDA(cudaMemcpy(out.data(), l.device, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace evk::reg_deform::gpu
#endif

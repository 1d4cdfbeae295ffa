#include "gpu_pyramid.hpp"
#if defined(EVK_HAVE_CUDA)
#include <stdexcept>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk_kernels/reg_deform_pyramid.hpp"
#include "gpu_field.hpp"
#include "pyramid.hpp"

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

// pyramid.cpp's downsample_volume: smooth (val/den in double, axis by axis), divide, subsample.
DevVolume downsample(const DevVolume& in, const std::array<bool, 3>& axes) {
  const Geometry& g = in.geo;
  unsigned long long n = g.voxels();
  Buffer<double> val[2], den[2];
  for (int b = 0; b < 2; ++b) {
    val[b].resize(n);
    den[b].resize(n);
  }
  const PyramidKernels& k = kernels();
  {
    const float* pin = in.data.get();
    double* pv = val[0].get();
    double* pd = den[0].get();
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
    const double* vi = val[cur].get();
    const double* di = den[cur].get();
    double* vo = val[1 - cur].get();
    double* dout = den[1 - cur].get();
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
  const double* pv = val[cur].get();
  const double* pd = den[cur].get();
  float* po = r.data.get();
  void* args[] = {&pv, &pd, &po, &nx, &ny, &rx, &ry, &rz, &fx, &fy, &fz};
  launch(k.finish, grid_for(rn), dim3(256), args);
  EVK_CUDA_LAST();
  return r;  // val/den are freed at return: cudaFree waits for the kernels that use them
}

Volume download(const DevVolume& d) {
  Volume v;
  v.geo = d.geo;
  v.data.resize(d.geo.voxels());
  d.data.download(v.data.data(), v.data.size());
  return v;
}
}  // namespace

std::vector<Volume> make_pyramid(const Volume& v, int levels, int used) {
  if (levels < 1 || used < 1 || used > levels) throw std::invalid_argument("make_pyramid: need 1 <= used <= levels");
  std::vector<Volume> p(used);
  if (used == 1 && levels == 1) {
    p[0] = v;
    return p;
  }
  std::vector<DevVolume> dev(used);
  DevVolume cur;
  cur.geo = v.geo;
  cur.data.upload(v.data.data(), v.data.size());
  for (int l = used; l < levels; ++l) cur = downsample(cur, pyramid_axes(cur.geo));
  dev[used - 1] = std::move(cur);
  p[used - 1] = levels == used ? v : download(dev[used - 1]);
  for (int l = used - 2; l >= 0; --l) {
    dev[l] = downsample(dev[l + 1], pyramid_axes(dev[l + 1].geo));
    p[l] = download(dev[l]);
  }
  return p;
}

}  // namespace evk::reg_deform::gpu
#endif

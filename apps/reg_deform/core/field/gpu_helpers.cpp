#include "core/field/gpu_helpers.hpp"
#if defined(EVK_HAVE_CUDA)
#include <algorithm>
#include <cstring>
#include <vector>

#include "evk/cuda_check.hpp"
#include "evk_kernels/reg_deform_helpers.hpp"

namespace evk::reg_deform::gpu {

Helpers::Helpers() : lib(reg_deform_helpers().fatbin) {
  fill = lib.kernel("reg_fill_identity");
  scatter_voxels = lib.kernel("reg_scatter_voxels");
  scatter_tiles = lib.kernel("reg_scatter_tiles");
  scatter_tiles_naive = lib.kernel("reg_scatter_tiles_naive");
  resample = lib.kernel("reg_resample");
  field_diff = lib.kernel("reg_field_diff");
}
const Helpers& helpers() {
  static Helpers h;
  return h;
}

// ---- resampling -------------------------------------------------------------------------------
Volume resample(const Volume& flo, const Field& field, const ResampleOptions& opt) {
  const Helpers& h = helpers();
  std::vector<float> coef;
  const std::vector<float>* src = &flo.data;
  if (opt.interp == Interp::cubic) {
    coef = bspline_coefficients(flo, opt.threads);
    src = &coef;
  }
  Buffer<float> d_field, d_flo, d_out;
  d_field.upload(field.data.data(), field.data.size());
  d_flo.upload(src->data(), src->size());
  const std::size_t nv = field.geo.voxels();
  d_out.resize(nv);
  const float* pf = d_field.get();
  const float* pflo = d_flo.get();
  float* pout = d_out.get();
  int nx = field.geo.nx, ny = field.geo.ny, nz = field.geo.nz, disp = field.displacement ? 1 : 0;
  int fx = flo.geo.nx, fy = flo.geo.ny, fz = flo.geo.nz;
  int interp = opt.interp == Interp::nearest ? 0 : opt.interp == Interp::linear ? 1 : 3;
  float pad = opt.pad;
  Affine34 rv = affine34f(field.geo.vox2world), fw = affine34f(flo.geo.vox2world.inverse());
  void* args[] = {&pf, &nx, &ny, &nz, &rv, &disp, &pflo, &fx, &fy, &fz, &fw, &interp, &pad, &pout};
  launch(h.resample, dim3(blocks_for(nv, 256)), dim3(256), args);
  EVK_CUDA_LAST();
  Volume out;
  out.geo = field.geo;
  out.data.resize(nv);
  d_out.download(out.data.data(), nv);
  return out;
}

// ---- the GI check ------------------------------------------------------------------------------
FieldDiff field_diff_gpu(const float* got, DiffLayout gl, const float* ref, DiffLayout rl, const std::uint8_t* inside,
                         std::size_t n, double tol, double wrong_tol, Buffer<double>& out, cudaStream_t s) {
  out.resize(4);  // 4 x 64 bits: max error bits, unset, over, wrong
  EVK_CUDA(cudaMemsetAsync(out.get(), 0, 4 * sizeof(double), s));
  FieldDiff d;
  if (n) {
    long long gs = gl.elem, gc = gl.comp, rs = rl.elem, rc = rl.comp, count = static_cast<long long>(n);
    void* res = out.get();
    void* args[] = {&got, &gs, &gc, &ref, &rs, &rc, &inside, &count, &tol, &wrong_tol, &res};
    int dev = 0, sms = 0;
    EVK_CUDA(cudaGetDevice(&dev));
    EVK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const unsigned blocks = std::min<unsigned>(blocks_for(n, 256), static_cast<unsigned>(sms) * 8);
    launch(helpers().field_diff, dim3(blocks), dim3(256), args, 0, s);
    EVK_CUDA_LAST();
  }
  unsigned long long h[4];
  EVK_CUDA(cudaMemcpyAsync(h, out.get(), sizeof h, cudaMemcpyDeviceToHost, s));
  EVK_CUDA(cudaStreamSynchronize(s));
  std::memcpy(&d.worst, &h[0], sizeof d.worst);
  d.unset = h[1];
  d.over = h[2];
  d.wrong = h[3];
  return d;
}

}  // namespace evk::reg_deform::gpu
#endif

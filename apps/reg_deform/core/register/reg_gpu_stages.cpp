#include "core/register/reg_gpu_stages.hpp"
#if defined(EVK_HAVE_CUDA)
#include <algorithm>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk_kernels/reg_gpu_adjoint.hpp"
#include "evk_kernels/reg_gpu_measure.hpp"
#include "evk_kernels/reg_gpu_optimiser.hpp"
#include "evk_kernels/reg_gpu_penalty.hpp"
#include "evk_kernels/reg_gpu_warp.hpp"

namespace evk::reg_deform::gpu_stage {

namespace {
struct Affine34d {
  double m[12];
};
struct Mat33d {
  double m[9];
};

struct RegKernels {
  CudaLibrary warp_lib, measure_lib, adjoint_lib, penalty_lib, optim_lib;
  cudaKernel_t warp, counts, entropies, nmi_grad, ssd_partial, ssd_grad, adj_x, adj_y, adj_z, pen_nodes, pen_gather,
      reduce, to_float4, scale_copy, step, max_length, cg_first, cg_partial, cg_update;
  RegKernels()
      : warp_lib(reg_gpu_warp().fatbin),
        measure_lib(reg_gpu_measure().fatbin),
        adjoint_lib(reg_gpu_adjoint().fatbin),
        penalty_lib(reg_gpu_penalty().fatbin),
        optim_lib(reg_gpu_optimiser().fatbin) {
    warp = warp_lib.kernel("reg_warp_linear");
    counts = measure_lib.kernel("reg_nmi_counts");
    entropies = measure_lib.kernel("reg_nmi_entropies");
    nmi_grad = measure_lib.kernel("reg_nmi_voxel_gradient");
    ssd_partial = measure_lib.kernel("reg_ssd_partial");
    ssd_grad = measure_lib.kernel("reg_ssd_voxel_gradient");
    adj_x = adjoint_lib.kernel("reg_adjoint_x");
    adj_y = adjoint_lib.kernel("reg_adjoint_y");
    adj_z = adjoint_lib.kernel("reg_adjoint_z");
    pen_nodes = penalty_lib.kernel("reg_penalty_nodes");
    pen_gather = penalty_lib.kernel("reg_penalty_gather");
    reduce = optim_lib.kernel("reg_reduce");
    to_float4 = optim_lib.kernel("reg_planar_to_float4");
    scale_copy = optim_lib.kernel("reg_scale_copy");
    step = optim_lib.kernel("reg_step");
    max_length = optim_lib.kernel("reg_max_length");
    cg_first = optim_lib.kernel("reg_cg_first");
    cg_partial = optim_lib.kernel("reg_cg_partial");
    cg_update = optim_lib.kernel("reg_cg_update");
  }
};
const RegKernels& K() {
  static RegKernels k;
  return k;
}

constexpr unsigned kThreads = 256;
unsigned blocks(long long n) {
  return static_cast<unsigned>(std::max<long long>(1, std::min<long long>((n + kThreads - 1) / kThreads, kMaxBlocks)));
}
void reduce(const double* in, int n, int width, int op, double* out) {
  void* a[] = {&in, &n, &width, &op, &out};
  launch(K().reduce, 1, 1024, a);
}
}  // namespace

void warp_linear(const float* field, const std::uint8_t* rmask, long long nv, const float* flo, const Geometry& fg,
                 const std::uint8_t* fmask, float* warped, float* grad) {
  Affine34d w2v;
  const Mat44 inv = fg.vox2world.inverse();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) w2v.m[r * 4 + c] = inv.m[r][c];
  const unsigned char* rm = rmask;
  const unsigned char* fm = fmask;
  int fx = fg.nx, fy = fg.ny, fz = fg.nz;
  void* a[] = {&field, &rm, &nv, &flo, &fx, &fy, &fz, &fm, &w2v, &warped, &grad};
  launch(K().warp, blocks(nv), kThreads, a);
}

void nmi_counts(const float* ref, const float* warped, const std::uint8_t* mask, long long nv, int nb, unsigned* counts) {
  EVK_CUDA(cudaMemsetAsync(counts, 0, static_cast<std::size_t>(nb) * nb * sizeof(unsigned)));
  const std::size_t smem = static_cast<std::size_t>(nb) * nb * sizeof(unsigned);
  int shared = smem <= 48 * 1024 ? 1 : 0;
  const unsigned char* m = mask;
  void* a[] = {&ref, &warped, &m, &nv, &nb, &shared, &counts};
  launch(K().counts, std::min<unsigned>(blocks(nv), 264), kThreads, a, shared ? smem : 0);
}

void nmi_entropies(const unsigned* counts, int nb, double* tmp, double* prob, double* logp, double* out) {
  void* a[] = {&counts, &nb, &tmp, &prob, &logp, &out};
  launch(K().entropies, 1, 1024, a);
}

void ssd_sums(const float* ref, const float* warped, const std::uint8_t* mask, long long nv, double* partial, double* out) {
  const unsigned char* m = mask;
  const unsigned nbk = blocks(nv);
  void* a[] = {&ref, &warped, &m, &nv, &partial};
  launch(K().ssd_partial, nbk, kThreads, a);
  reduce(partial, static_cast<int>(nbk), 2, 0, out);
}

void nmi_voxel_gradient(const float* ref, const float* warped, const float* grad, const std::uint8_t* mask, long long nv,
                        int nb, const double* logp, const double* ent, float* out) {
  const unsigned char* m = mask;
  void* a[] = {&ref, &warped, &grad, &m, &nv, &nb, &logp, &ent, &out};
  launch(K().nmi_grad, blocks(nv), kThreads, a);
}

void ssd_voxel_gradient(const float* ref, const float* warped, const float* grad, const std::uint8_t* mask, long long nv,
                        const double* stats, float* out) {
  const unsigned char* m = mask;
  void* a[] = {&ref, &warped, &grad, &m, &nv, &stats, &out};
  launch(K().ssd_grad, blocks(nv), kThreads, a);
}

void adjoint(const float* voxel, const Geometry& ref, const Grid& grid, float* t1, float* t2, float* node) {
  int nx = ref.nx, ny = ref.ny, nz = ref.nz, gx = grid.geo.nx, gy = grid.geo.ny, gz = grid.geo.nz;
  double sx = grid.sx, sy = grid.sy, sz = grid.sz;
  {
    void* a[] = {&voxel, &nx, &ny, &nz, &gx, &sx, &t1};
    launch(K().adj_x, blocks(3LL * nz * ny * gx), kThreads, a);
  }
  {
    const float* in = t1;
    void* a[] = {&in, &ny, &nz, &gx, &gy, &sy, &t2};
    launch(K().adj_y, blocks(3LL * nz * gy * gx), kThreads, a);
  }
  {
    const float* in = t2;
    void* a[] = {&in, &nz, &gx, &gy, &gz, &sz, &node};
    launch(K().adj_z, blocks(3LL * gz * gy * gx), kThreads, a);
  }
}

void penalty(int kind, const float* cp, const Grid& grid, double* adj, double* partial, double* value_out, double scale,
             float* grad) {
  int gx = grid.geo.nx, gy = grid.geo.ny, gz = grid.geo.nz;
  Mat33d m;
  const Mat44 gi = grid.geo.vox2world.inverse();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m.m[r * 3 + c] = gi.m[r][c];
  const long long np = static_cast<long long>(gx) * gy * gz;
  const unsigned nbk = blocks(np);
  void* a[] = {&cp, &gx, &gy, &gz, &kind, &m, &adj, &partial};
  launch(K().pen_nodes, nbk, kThreads, a);
  if (value_out) reduce(partial, static_cast<int>(nbk), 1, 0, value_out);
  if (grad) {
    const double* ad = adj;
    void* b[] = {&ad, &gx, &gy, &gz, &kind, &scale, &grad};
    launch(K().pen_gather, blocks(np), kThreads, b);
  }
}

void to_float4(const float* planar, long long np, float4* out) {
  void* a[] = {&planar, &np, &out};
  launch(K().to_float4, blocks(np), kThreads, a);
}
void scale_copy(const float* in, long long n, double s, float* out) {
  void* a[] = {&in, &n, &s, &out};
  launch(K().scale_copy, blocks(n), kThreads, a);
}
void step(const float* best, const float* grad, long long n, double scale, float* current) {
  void* a[] = {&best, &grad, &n, &scale, &current};
  launch(K().step, blocks(n), kThreads, a);
}
void max_length(const float* grad, long long np, double* partial, double* out) {
  const unsigned nbk = blocks(np);
  void* a[] = {&grad, &np, &partial};
  launch(K().max_length, nbk, kThreads, a);
  reduce(partial, static_cast<int>(nbk), 1, 1, out);
}
void cg_first(const float* grad, long long n, float* g_prev, float* h) {
  void* a[] = {&grad, &n, &g_prev, &h};
  launch(K().cg_first, blocks(n), kThreads, a);
}
void cg_update(float* grad, float* g_prev, float* h, long long n, double* partial, double* sums) {
  const unsigned nbk = blocks(n);
  const float *gc = grad, *gpc = g_prev, *hc = h;
  void* a[] = {&gc, &gpc, &hc, &n, &partial};
  launch(K().cg_partial, nbk, kThreads, a);
  reduce(partial, static_cast<int>(nbk), 2, 0, sums);
  const double* s = sums;
  void* b[] = {&s, &n, &grad, &g_prev, &h};
  launch(K().cg_update, blocks(n), kThreads, b);
}

}  // namespace evk::reg_deform::gpu_stage
#endif

// `register`'s GPU stages as host functions over device pointers (the one launch path: the GPU
// engine and the GPU tests both call these). Kernels: reg_gpu_{warp,measure,adjoint,penalty,
// optimiser}.cu, embedded and loaded once per process into the current device. All launches go on
// the default stream; nothing synchronises unless it says so.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>

#include <cstdint>

#include "core/types.hpp"

namespace evk::reg_deform::gpu_stage {

constexpr unsigned kMaxBlocks = 2048;  // partial-sum buffers must hold 2 * kMaxBlocks doubles

// Stage 2: warped (nv) and, when grad != nullptr, its world gradient (3 nv); field: 3 nv planar.
void warp_linear(const float* field, const std::uint8_t* rmask, long long nv, const float* flo, const Geometry& flo_geo,
                 const std::uint8_t* fmask, float* warped, float* grad);

// Stage 3: counts (nb*nb uint32, zeroed here) of the joint histogram; then the entropies:
// out[0..4] = nmi, H(R), H(W), H(R,W), total; tmp nb*nb doubles; prob, logp nb*nb + 2nb doubles.
void nmi_counts(const float* ref, const float* warped, const std::uint8_t* mask, long long nv, int nb, unsigned* counts);
void nmi_entropies(const unsigned* counts, int nb, double* tmp, double* prob, double* logp, double* out);
// SSD: out[0] = sum (R - W)^2, out[1] = count (partial: 2 * kMaxBlocks doubles of scratch).
void ssd_sums(const float* ref, const float* warped, const std::uint8_t* mask, long long nv, double* partial, double* out);

// Stage 4: voxel-wise gradients (3 nv); ent: nmi_entropies' out; stats: ssd_sums' out.
void nmi_voxel_gradient(const float* ref, const float* warped, const float* grad, const std::uint8_t* mask, long long nv,
                        int nb, const double* logp, const double* ent, float* out);
void ssd_voxel_gradient(const float* ref, const float* warped, const float* grad, const std::uint8_t* mask, long long nv,
                        const double* stats, float* out);

// Stage 5: node (3 * grid points) = adjoint of the field for the grid's dims and spacing.
// t1: 3 nz ny gx floats, t2: 3 nz gy gx floats of scratch.
void adjoint(const float* voxel, const Geometry& ref, const Grid& grid, float* t1, float* t2, float* node);

// Stage 6: kind 0 bending, 1 linear, 2 Jacobian log on the control points cp (planar, grid dims).
// value_out (when not null): the sum over interior nodes of the node values (device double);
// with grad != nullptr: grad += scale * derivative of that sum. adj: 18 * points doubles of scratch.
void penalty(int kind, const float* cp, const Grid& grid, double* adj, double* partial, double* value_out, double scale,
             float* grad);

// Stage 7 vector work (n floats; np = n / 3 points).
void to_float4(const float* planar, long long np, float4* out);
void scale_copy(const float* in, long long n, double a, float* out);
void step(const float* best, const float* grad, long long n, double scale, float* current);
void max_length(const float* grad, long long np, double* partial, double* out);
void cg_first(const float* grad, long long n, float* g_prev, float* h);
void cg_update(float* grad, float* g_prev, float* h, long long n, double* partial, double* sums);

}  // namespace evk::reg_deform::gpu_stage
#endif

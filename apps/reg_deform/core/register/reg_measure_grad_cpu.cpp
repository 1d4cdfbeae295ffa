#include "core/register/reg_measure_grad_cpu.hpp"

#include "evk/parallel.hpp"

namespace evk::reg_deform {

void nmi_voxel_gradient_cpu(const float* ref, const float* warped, const float* grad, const Mask& mask,
                            std::size_t nv, const NmiHistogram& h, float* out, int threads) {
  const int nb = h.nb;
  const std::size_t off_r = static_cast<std::size_t>(nb) * nb, off_w = off_r + nb;
  const double nmi = h.nmi(), norm = h.h_joint * h.total;
  parallel_for(
      nv,
      [&](std::size_t v0, std::size_t v1) {
        for (std::size_t v = v0; v < v1; ++v) {
          out[v] = out[nv + v] = out[2 * nv + v] = 0.0f;
          if (!mask.empty() && !mask[v]) continue;
          const float rv = ref[v], wv = warped[v];
          if (!(rv == rv) || !(wv == wv) || !(norm > 0)) continue;
          double common = 0;  // sum B(r - i) B'(w - j) [log pr + log pw - nmi log p]
          const int r0 = static_cast<int>(rv - 1.0f), w0 = static_cast<int>(wv - 1.0f);
          for (int r = r0; r < r0 + 4; ++r) {
            if (r < 0 || r >= nb) continue;
            const double br = spline_basis(double(rv) - r);
            for (int w = w0; w < w0 + 4; ++w) {
              if (w < 0 || w >= nb) continue;
              const double c = br * spline_basis_derivative(double(wv) - w);
              common += c * (h.logp[r + off_r] + h.logp[w + off_w] - nmi * h.logp[r + static_cast<std::size_t>(nb) * w]);
            }
          }
          const double f = common / norm;
          for (int a = 0; a < 3; ++a) out[a * nv + v] = static_cast<float>(f * grad[a * nv + v]);
        }
      },
      threads);
}

void ssd_voxel_gradient_cpu(const float* ref, const float* warped, const float* grad, const Mask& mask,
                            std::size_t nv, std::size_t n_valid, float* out, int threads) {
  const double k = n_valid ? -2.0 / static_cast<double>(n_valid) : 0.0;
  parallel_for(
      nv,
      [&](std::size_t v0, std::size_t v1) {
        for (std::size_t v = v0; v < v1; ++v) {
          out[v] = out[nv + v] = out[2 * nv + v] = 0.0f;
          if (!mask.empty() && !mask[v]) continue;
          const float rv = ref[v], wv = warped[v];
          if (!(rv == rv) || !(wv == wv)) continue;
          const double f = k * (double(rv) - double(wv));
          for (int a = 0; a < 3; ++a) out[a * nv + v] = static_cast<float>(f * grad[a * nv + v]);
        }
      },
      threads);
}

}  // namespace evk::reg_deform

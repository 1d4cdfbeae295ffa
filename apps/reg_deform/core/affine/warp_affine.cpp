#include "core/affine/warp_affine.hpp"

#include "core/affine/block_match.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

Volume warp_affine_cpu(const Geometry& ref, const Volume& flo, const Mat44& ref2flo, const ResampleOptions& opt) {
  const Mat44 m = voxel_map(ref, flo.geo, ref2flo);
  std::vector<float> coef;
  const float* src = flo.data.data();
  if (opt.interp == Interp::cubic) {
    coef = bspline_coefficients(flo, opt.threads);
    src = coef.data();
  }
  Volume out;
  out.geo = ref;
  out.data.resize(ref.voxels());
  parallel_for(
      static_cast<std::size_t>(ref.ny) * ref.nz,
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
          const int y = static_cast<int>(r % ref.ny), z = static_cast<int>(r / ref.ny);
          for (int x = 0; x < ref.nx; ++x) {
            const auto p = m.apply(x, y, z);
            out.data[ref.index(x, y, z)] = sample(src, flo.geo, p[0], p[1], p[2], opt.interp, opt.pad);
          }
        }
      },
      opt.threads);
  return out;
}

}  // namespace evk::reg_deform

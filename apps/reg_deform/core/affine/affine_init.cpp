#include "core/affine/affine_init.hpp"

#include <cmath>
#include <string>

#include "evk/error.hpp"

namespace evk::reg_deform {

Mat44 init_centres(const Geometry& ref, const Geometry& flo) {
  const auto r = ref.vox2world.apply(ref.nx / 2.0, ref.ny / 2.0, ref.nz / 2.0);
  const auto f = flo.vox2world.apply(flo.nx / 2.0, flo.ny / 2.0, flo.nz / 2.0);
  Mat44 m;
  for (int a = 0; a < 3; ++a) m.m[a][3] = f[a] - r[a];
  return m;
}

std::array<double, 3> centre_of_mass(const Volume& v, const Mask& mask, const std::string& what) {
  const Geometry& g = v.geo;
  double s[3] = {0, 0, 0}, w = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = g.index(x, y, z);
        if (!mask.empty() && !mask[i]) continue;
        const double val = v.data[i];
        if (!(val > 0) || !std::isfinite(val)) continue;
        s[0] += val * x;
        s[1] += val * y;
        s[2] += val * z;
        w += val;
      }
  if (!(w > 0)) input_error(what, mask.empty() ? "no positive intensity: no centre of mass"
                                                : "no positive intensity inside the mask: no centre of mass");
  return g.vox2world.apply(s[0] / w, s[1] / w, s[2] / w);
}

Mat44 init_centres_of_mass(const Volume& ref, const Mask& rmask, const Volume& flo, const Mask& fmask) {
  const auto r = centre_of_mass(ref, rmask, "reference");
  const auto f = centre_of_mass(flo, fmask, "floating");
  Mat44 m;
  for (int a = 0; a < 3; ++a) m.m[a][3] = f[a] - r[a];
  return m;
}

}  // namespace evk::reg_deform

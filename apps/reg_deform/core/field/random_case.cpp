#include "core/field/random_case.hpp"

#include "core/field/grid_make.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

RandomCase make_random_case(const RandomCaseOptions& opt) {
  if (opt.size < 8) input_error("--size", "must be at least 8");
  SplitMix64 rng(opt.seed * 0x2545f4914f6cdd1dull + 12345);
  const double v = opt.variation;
  const double r = opt.radius * (opt.size / 217.0) * rng.uniform(1 - v, 1 + v);
  double centre[3], semi[3];
  for (int a = 0; a < 3; ++a) centre[a] = (opt.size - 1) / 2.0 * rng.uniform(1 - v, 1 + v);
  for (int a = 0; a < 3; ++a) semi[a] = r * rng.uniform(1 - v, 1 + v);  // per-axis compression

  RandomCase c;
  c.image.geo = Geometry::make(opt.size, opt.size, opt.size);
  const Geometry& g = c.image.geo;
  c.image.data.assign(g.voxels(), 0.0f);
  c.mask.assign(g.voxels(), 0);
  SplitMix64 noise(opt.seed ^ 0x6a09e667f3bcc909ull);
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const double p[3] = {(x - centre[0]) / semi[0], (y - centre[1]) / semi[1], (z - centre[2]) / semi[2]};
        const std::size_t i = g.index(x, y, z);
        if (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] <= 1) {
          c.mask[i] = 1;
          c.image.data[i] = static_cast<float>(noise.uniform());
        }
      }
  c.grid = make_grid(g, opt.spacing);
  SplitMix64 disp(opt.seed ^ 0xbb67ae8584caa73bull);
  for (auto& cp : c.grid.data) cp = static_cast<float>(cp + disp.uniform(-opt.max_displacement, opt.max_displacement));
  return c;
}

}  // namespace evk::reg_deform

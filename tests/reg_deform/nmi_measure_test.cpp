// nmi_like_reg_measure (parallel, the defined region computed from the size) against the plain
// serial statement of reg_measure's NMI: the 4x4x4 stencil tested by three separable passes over
// a defined-mask, the images copied, rescaled and counted. The counts are integers, so the two must
// agree exactly, whatever the threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/register/reg_measure_cpu.hpp"
#include "core/register/reg_register.hpp"

namespace rd = evk::reg_deform;

namespace {

double naive_nmi(const rd::Volume& ref, const rd::Volume& image, int bins) {
  const rd::Geometry& g = ref.geo;
  std::vector<std::uint8_t> ok(g.voxels(), 1);
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, static_cast<std::size_t>(g.nx), static_cast<std::size_t>(g.nx) * g.ny};
  for (int a = 0; a < 3; ++a) {
    std::vector<std::uint8_t> out(ok.size(), 0);
    for (int z = 0; z < g.nz; ++z)
      for (int y = 0; y < g.ny; ++y)
        for (int x = 0; x < g.nx; ++x) {
          const int c[3] = {x, y, z};
          const std::size_t v = g.index(x, y, z);
          if (c[a] < 1 || c[a] + 2 >= n[a]) continue;
          out[v] = ok[v - stride[a]] & ok[v] & ok[v + stride[a]] & ok[v + 2 * stride[a]];
        }
    ok.swap(out);
  }
  rd::Volume r = ref, w = image;
  for (std::size_t i = 0; i < ok.size(); ++i) {
    if (!std::isfinite(w.data[i])) w.data[i] = 0;
    if (!ok[i]) w.data[i] = std::numeric_limits<float>::quiet_NaN();
  }
  rd::rescale_for_nmi(r, bins);
  rd::rescale_for_nmi(w, bins);
  const int nb = bins + 4;
  std::vector<double> counts(static_cast<std::size_t>(nb) * nb, 0.0);
  for (std::size_t v = 0; v < g.voxels(); ++v) {
    const float a = r.data[v], b = w.data[v];
    if (!(a >= 0 && a < nb && b >= 0 && b < nb)) continue;  // NaN and +-inf fail too
    counts[static_cast<int>(a) + static_cast<std::size_t>(nb) * static_cast<int>(b)] += 1;
  }
  rd::NmiHistogram h;
  rd::nmi_from_counts(counts, nb, h);
  return h.nmi();
}

rd::Volume noise(int nx, int ny, int nz, std::mt19937& rng, double special) {
  rd::Volume v;
  v.geo.nx = nx, v.geo.ny = ny, v.geo.nz = nz;
  v.data.resize(v.geo.voxels());
  std::normal_distribution<float> val(100.f, 40.f);
  std::uniform_real_distribution<double> u(0, 1);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), -5000.f, 9000.f};
  for (std::size_t i = 0; i < v.data.size(); ++i) {
    v.data[i] = val(rng);
    if (u(rng) < special) v.data[i] = specials[i % 5];
  }
  return v;
}

}  // namespace

TEST(NmiMeasure, EqualsTheSerialStatementExactly) {
  std::mt19937 rng(7);
  const int sizes[][3] = {{37, 29, 23}, {5, 4, 4}, {64, 3, 9}, {101, 97, 41}};
  for (const auto& s : sizes)
    for (double special : {0.0, 0.01, 0.2}) {
      const rd::Volume ref = noise(s[0], s[1], s[2], rng, special);
      rd::Volume img = noise(s[0], s[1], s[2], rng, special);
      for (std::size_t i = 0; i < img.data.size(); i += 3) img.data[i] = 0.5f * ref.data[i] + 7.f;  // some dependence
      for (int bins : {64, 16}) {
        const double want = naive_nmi(ref, img, bins), got = rd::nmi_like_reg_measure(ref, img, bins);
        EXPECT_EQ(got, want) << s[0] << "x" << s[1] << "x" << s[2] << " special " << special << " bins " << bins;
      }
    }
  // a real dependence gives NMI above the independent case (the test would pass on two constants otherwise)
  rd::Volume a = noise(40, 40, 40, rng, 0), b = a;
  const rd::Volume c = noise(40, 40, 40, rng, 0);
  EXPECT_GT(rd::nmi_like_reg_measure(a, b), rd::nmi_like_reg_measure(a, c) + 0.3);
}

#include "core/affine/block_match.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/field/resample_cpu.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

namespace {
inline bool active_at(const Mask& mask, std::size_t i) { return mask.empty() || mask[i] != 0; }

// The reference values of block b (64 entries, x fastest) and which of them are usable.
void load_block(const Volume& ref, const Mask& mask, const BlockLayout& l, int b, double* v, bool* ok) {
  const Geometry& g = ref.geo;
  int x0, y0, z0;
  l.corner(b, x0, y0, z0);
  if (x0 + kBlockWidth <= g.nx && y0 + kBlockWidth <= g.ny && z0 + kBlockWidth <= g.nz) {
    // inside the volume (most blocks): rows of 4 contiguous voxels, the same values as below
    int a = 0;
    for (int z = z0; z < z0 + kBlockWidth; ++z)
      for (int y = y0; y < y0 + kBlockWidth; ++y) {
        const std::size_t row = g.index(x0, y, z);
        const float* r = ref.data.data() + row;
        for (int x = 0; x < kBlockWidth; ++x, ++a) {
          const bool use = std::isfinite(r[x]) && (mask.empty() || mask[row + x] != 0);
          ok[a] = use;
          v[a] = use ? r[x] : 0.0;
        }
      }
    return;
  }
  int a = 0;
  for (int z = z0; z < z0 + kBlockWidth; ++z)
    for (int y = y0; y < y0 + kBlockWidth; ++y)
      for (int x = x0; x < x0 + kBlockWidth; ++x, ++a) {
        ok[a] = false;
        v[a] = 0;
        if (x >= g.nx || y >= g.ny || z >= g.nz) continue;
        const std::size_t i = g.index(x, y, z);
        const float r = ref.data[i];
        if (std::isfinite(r) && active_at(mask, i)) {
          ok[a] = true;
          v[a] = r;
        }
      }
}

// |NCC| of the loaded block against the warped image displaced by (dx, dy, dz). aff_match_blocks
// repeats these double operations in this order (sums over a = 0..63, i.e. z, y, x; then the
// centred second pass), so both give the same bits (no FMA contraction in this file).
double ncc_at(const Geometry& g, const std::vector<float>& warped, int x0, int y0, int z0, const double* rv,
              const bool* rok, int dx, int dy, int dz) {
  double w[kBlockVoxels];
  bool ok[kBlockVoxels];
  int n = 0;
  double sr = 0, sw = 0;
  int a = 0;
  for (int z = z0; z < z0 + kBlockWidth; ++z)
    for (int y = y0; y < y0 + kBlockWidth; ++y)
      for (int x = x0; x < x0 + kBlockWidth; ++x, ++a) {
        ok[a] = false;
        if (!rok[a]) continue;
        const int wx = x + dx, wy = y + dy, wz = z + dz;
        if (wx < 0 || wy < 0 || wz < 0 || wx >= g.nx || wy >= g.ny || wz >= g.nz) continue;
        const float v = warped[g.index(wx, wy, wz)];
        if (!std::isfinite(v)) continue;
        ok[a] = true;
        w[a] = v;
        sr += rv[a];
        sw += v;
        ++n;
      }
  if (n < kMinOverlap) return -1;  // not a candidate
  const double mr = sr / n, mw = sw / n;
  double vr = 0, vw = 0, c = 0;
  for (int k = 0; k < kBlockVoxels; ++k)
    if (ok[k]) {
      const double r = rv[k] - mr, s = w[k] - mw;
      vr += r * r;
      vw += s * s;
      c += r * s;
    }
  return vr * vw > 0 ? std::fabs(c) / std::sqrt(vr * vw) : 0;
}
}  // namespace

BlockLayout select_blocks(const Volume& ref, const Mask& mask, int percent) {
  const Geometry& g = ref.geo;
  BlockLayout l;
  l.bx = (g.nx + kBlockWidth - 1) / kBlockWidth;
  l.by = (g.ny + kBlockWidth - 1) / kBlockWidth;
  l.bz = (g.nz + kBlockWidth - 1) / kBlockWidth;
  const int total = l.total();
  std::vector<double> var(total, -1);
  parallel_for(static_cast<std::size_t>(total), [&](std::size_t b0, std::size_t b1) {
    double v[kBlockVoxels];
    bool ok[kBlockVoxels];
    for (std::size_t b = b0; b < b1; ++b) {
      load_block(ref, mask, l, static_cast<int>(b), v, ok);
      int n = 0;
      double s = 0;
      for (int a = 0; a < kBlockVoxels; ++a)
        if (ok[a]) s += v[a], ++n;
      if (n < kMinOverlap) continue;
      const double m = s / n;
      double q = 0;
      for (int a = 0; a < kBlockVoxels; ++a)
        if (ok[a]) q += (v[a] - m) * (v[a] - m);
      if (q > 0) var[b] = q / n;
    }
  });
  std::vector<int> idx;
  for (int b = 0; b < total; ++b)
    if (var[b] > 0) idx.push_back(b);
  l.usable = static_cast<int>(idx.size());
  // highest variance first; equal variances by block index (deterministic)
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return var[a] > var[b]; });
  const std::size_t want = static_cast<std::size_t>(static_cast<double>(total) * percent / 100.0);
  idx.resize(std::min(want, idx.size()));
  l.active = std::move(idx);
  return l;
}

double block_ncc(const Volume& ref, const Mask& mask, const std::vector<float>& warped, int block,
                 const BlockLayout& layout, int dx, int dy, int dz) {
  double v[kBlockVoxels];
  bool ok[kBlockVoxels];
  load_block(ref, mask, layout, block, v, ok);
  int x0, y0, z0;
  layout.corner(block, x0, y0, z0);
  return std::max(0.0, ncc_at(ref.geo, warped, x0, y0, z0, v, ok, dx, dy, dz));
}

std::vector<BlockMatch> match_blocks_cpu(const Volume& ref, const Mask& mask, const std::vector<float>& warped,
                                         const BlockLayout& layout, int threads) {
  std::vector<BlockMatch> out(layout.active.size());
  parallel_for(
      layout.active.size(),
      [&](std::size_t i0, std::size_t i1) {
        double v[kBlockVoxels];
        bool ok[kBlockVoxels];
        for (std::size_t i = i0; i < i1; ++i) {
          const int b = layout.active[i];
          load_block(ref, mask, layout, b, v, ok);
          int x0, y0, z0;
          layout.corner(b, x0, y0, z0);
          BlockMatch best;
          double best_ncc = 0;
          int bi = -1;
          double cs[kCandidates];
          int c = 0;
          for (int dz = -kCaptureRange; dz <= kCaptureRange; ++dz)
            for (int dy = -kCaptureRange; dy <= kCaptureRange; ++dy)
              for (int dx = -kCaptureRange; dx <= kCaptureRange; ++dx, ++c) {
                cs[c] = ncc_at(ref.geo, warped, x0, y0, z0, v, ok, dx, dy, dz);
                if (cs[c] > best_ncc) {
                  best_ncc = cs[c];
                  bi = c;
                  best.dx = dx;
                  best.dy = dy;
                  best.dz = dz;
                }
              }
          if (bi >= 0) {
            const int w = 2 * kCaptureRange + 1;
            const int ix = bi % w, iy = (bi / w) % w, iz = bi / (w * w);
            auto along = [&](int at, int step) {
              const double cm = at > 0 ? cs[bi - step] : -1.0, cp = at < w - 1 ? cs[bi + step] : -1.0;
              return static_cast<float>(subvoxel_offset(cm, cs[bi], cp));
            };
            best.fx = along(ix, 1);
            best.fy = along(iy, w);
            best.fz = along(iz, w * w);
          }
          best.ncc = static_cast<float>(best_ncc);
          out[i] = best;
        }
      },
      threads);
  return out;
}

double subvoxel_offset(double cm, double c0, double cp) {
  if (!(cm >= 0 && cp >= 0)) return 0;
  const double two = c0 + c0;
  const double t = cm - two;
  const double den = t + cp;  // cm - 2 c0 + cp: < 0 at a maximum
  if (!(den < 0)) return 0;
  const double num = cm - cp;
  const double h = 0.5 * num;
  const double f = h / den;  // vertex of the parabola through (-1, cm), (0, c0), (1, cp)
  return f < -0.5 ? -0.5 : f > 0.5 ? 0.5 : f;
}

Mat44 voxel_map(const Geometry& ref, const Geometry& flo, const Mat44& ref2flo) {
  return flo.vox2world.inverse() * ref2flo * ref.vox2world;
}

namespace {
// One voxel of the warp, the arithmetic aff_warp_linear repeats operation for operation (this file
// is compiled with -ffp-contract=off; every line below is one correctly rounded double operation):
//   p_r = ((m_r0 x + m_r1 y) + m_r2 z) + m_r3
//   NaN unless -1e-4 <= p_r <= (n_r - 1) + 1e-4 on every axis
//   q = clamp(p, 0, n - 1); i0 = floor(q); f = q - i0; i1 = min(i0 + 1, n - 1); weights (1 - f, f)
//   s = sum over z, y, x corners (0 then 1) of w = (wx wy) wz, skipped where w == 0, s += w v
//   result (float) s
float warp_linear_voxel(const float* flo, const int n[3], const double (&m)[12], int x, int y, int z) {
  const double i = x, j = y, k = z;
  double p[3];
  for (int r = 0; r < 3; ++r) {
    const double* mr = m + 4 * r;
    double a = mr[0] * i;
    const double b = mr[1] * j;
    a = a + b;
    const double c = mr[2] * k;
    a = a + c;
    p[r] = a + mr[3];
  }
  constexpr double eps = 1e-4;
  for (int d = 0; d < 3; ++d) {
    const double hi = static_cast<double>(n[d] - 1) + eps;
    if (!(p[d] >= -eps && p[d] <= hi)) return std::numeric_limits<float>::quiet_NaN();
  }
  int lo[3], up[3];
  double w[3][2];
  for (int d = 0; d < 3; ++d) {
    const double q = std::min(std::max(p[d], 0.0), static_cast<double>(n[d] - 1));
    lo[d] = static_cast<int>(std::floor(q));
    up[d] = std::min(lo[d] + 1, n[d] - 1);
    const double f = q - static_cast<double>(lo[d]);
    w[d][0] = 1.0 - f;
    w[d][1] = f;
  }
  const std::size_t sxy = static_cast<std::size_t>(n[0]) * n[1];
  double s = 0;
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) {
        double wt = w[0][a] * w[1][b];
        wt = wt * w[2][c];
        if (wt != 0.0) {
          const std::size_t idx = static_cast<std::size_t>(c ? up[2] : lo[2]) * sxy +
                                  static_cast<std::size_t>(b ? up[1] : lo[1]) * n[0] + (a ? up[0] : lo[0]);
          const double t = wt * static_cast<double>(flo[idx]);
          s = s + t;
        }
      }
  return static_cast<float>(s);
}
}  // namespace

std::vector<float> warp_linear_cpu(const Geometry& ref, const Volume& flo, const Mat44& ref2flo, int threads) {
  const Mat44 vm = voxel_map(ref, flo.geo, ref2flo);
  double m[12];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m[4 * r + c] = vm.m[r][c];
  const int n[3] = {flo.geo.nx, flo.geo.ny, flo.geo.nz};
  std::vector<float> out(ref.voxels());
  parallel_for(
      static_cast<std::size_t>(ref.ny) * ref.nz,
      [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
          const int y = static_cast<int>(r % ref.ny), z = static_cast<int>(r / ref.ny);
          for (int x = 0; x < ref.nx; ++x) out[ref.index(x, y, z)] = warp_linear_voxel(flo.data.data(), n, m, x, y, z);
        }
      },
      threads);
  return out;
}

}  // namespace evk::reg_deform

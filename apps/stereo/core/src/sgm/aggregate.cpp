// Stage aggregate: along each direction r the path costs
//   L_r(p, k) = C(p, k) + min(L_r(p-r, k), L_r(p-r, k-1) + P1, L_r(p-r, k+1) + P1, m + P2) - m,
//   m = min_k L_r(p-r, k)
// (terms with k-1 or k+1 outside 0..count-1 are left out; where p-r is outside the image
// L_r(p, k) = C(p, k)), and S(p, k) = sum over the directions of L_r(p, k). Every L_r lies in
// 0..cost_max + P2, so S fits 16 bits (validate() bounds P2).
#include <algorithm>
#include <stdexcept>

#include "core/sgm.hpp"
#include "evk/parallel.hpp"

namespace evk::stereo {

namespace {
constexpr int kBig = 1 << 14;  // above any L_r (cost_max + P2 <= 8191)

// Lines of a direction: horizontal ones are rows, the others W lines of H steps; a diagonal line j
// visits x = (j + dx * s) mod W at step s and restarts where x - dx leaves the image.
struct Line {
  int W, H;
  Direction r;
  int count() const { return r.dy == 0 ? H : W; }
  int steps() const { return r.dy == 0 ? W : H; }
  // Cell of step s on line j; `fresh` when p - r is outside the image.
  void cell(int j, int s, int& x, int& y, bool& fresh) const {
    if (r.dy == 0) {
      y = j;
      x = r.dx > 0 ? s : W - 1 - s;
      fresh = s == 0;
      return;
    }
    y = r.dy > 0 ? s : H - 1 - s;
    if (r.dx == 0) {
      x = j;
      fresh = s == 0;
      return;
    }
    x = ((j + r.dx * s) % W + W) % W;
    fresh = s == 0 || x - r.dx < 0 || x - r.dx >= W;
  }
};
}  // namespace

namespace {
// One direction's recurrence over all its lines (in parallel); sink(x, y, L) receives each cell's
// path costs L[0..D-1]. Cells of a direction are disjoint, so sinks may write without locks.
template <class Sink>
void run_direction(const CostVolume& c, const SgmParams& p, int dir, int threads, const Sink& sink) {
  const int W = c.width, H = c.height, D = c.count;
  const Line line{W, H, sgm_directions()[dir]};
  parallel_for(static_cast<std::size_t>(line.count()), [&](std::size_t j0, std::size_t j1) {
    // prev/next with a sentinel on each side: index k + 1 holds disparity index k
    std::vector<int> prev(static_cast<std::size_t>(D) + 2, kBig), next(prev), cost(static_cast<std::size_t>(D));
    for (int j = static_cast<int>(j0); j < static_cast<int>(j1); ++j) {
      int m = 0;
      for (int s = 0; s < line.steps(); ++s) {
        int x, y;
        bool fresh;
        line.cell(j, s, x, y, fresh);
        if (fresh) {
          std::fill(prev.begin() + 1, prev.end() - 1, 0);
          m = 0;
        }
        for (int k = 0; k < D; ++k) cost[static_cast<std::size_t>(k)] = c.at(x, y, k);
        int mn = kBig;
        const int* pv = prev.data() + 1;
        int* nx = next.data() + 1;
        for (int k = 0; k < D; ++k) {
          const int t = std::min(std::min(pv[k], std::min(pv[k - 1], pv[k + 1]) + p.p1), m + p.p2);
          const int v = cost[static_cast<std::size_t>(k)] + t - m;
          nx[k] = v;
          mn = std::min(mn, v);
        }
        sink(x, y, nx);
        std::swap(prev, next);
        m = mn;
      }
    }
  }, threads);
}
}  // namespace

std::vector<std::uint16_t> aggregate_cpu(const CostVolume& c, const SgmParams& p, int threads) {
  validate(p);
  const int W = c.width, H = c.height, D = c.count;
  std::vector<std::uint16_t> S(static_cast<std::size_t>(W) * H * D, 0);
  for (int dir = 0; dir < p.paths; ++dir)
    run_direction(c, p, dir, threads, [&](int x, int y, const int* L) {
      std::uint16_t* out = &S[(static_cast<std::size_t>(y) * W + x) * D];
      for (int k = 0; k < D; ++k) out[k] = static_cast<std::uint16_t>(out[k] + L[k]);
    });
  return S;
}

std::vector<std::uint16_t> aggregate_direction_cpu(const CostVolume& c, const SgmParams& p, int dir, int threads) {
  validate(p);
  if (dir < 0 || dir >= 8) throw std::logic_error("aggregate_direction_cpu: direction 0..7");
  const int W = c.width, D = c.count;
  std::vector<std::uint16_t> L(static_cast<std::size_t>(W) * c.height * D);
  run_direction(c, p, dir, threads, [&](int x, int y, const int* v) {
    std::uint16_t* out = &L[(static_cast<std::size_t>(y) * W + x) * D];
    for (int k = 0; k < D; ++k) out[k] = static_cast<std::uint16_t>(v[k]);
  });
  return L;
}

std::vector<std::uint16_t> aggregate_naive(const CostVolume& c, const SgmParams& p, int only_direction) {
  validate(p);
  const int W = c.width, H = c.height, D = c.count;
  std::vector<long long> sum(static_cast<std::size_t>(W) * H * D, 0);
  auto idx = [&](int x, int y, int k) { return (static_cast<std::size_t>(y) * W + x) * D + k; };
  for (int dir = 0; dir < p.paths; ++dir) {
    if (only_direction >= 0 && dir != only_direction) continue;
    const Direction r = sgm_directions()[dir];
    std::vector<long long> L(sum.size(), 0);
    // Visit p after p - r: rows in the direction of dy, within a row columns in the direction of dx.
    for (int yi = 0; yi < H; ++yi) {
      const int y = r.dy >= 0 ? yi : H - 1 - yi;
      for (int xi = 0; xi < W; ++xi) {
        const int x = r.dx >= 0 ? xi : W - 1 - xi;
        const int px = x - r.dx, py = y - r.dy;
        const bool inside = px >= 0 && px < W && py >= 0 && py < H;
        long long m = 0;
        if (inside) {
          m = L[idx(px, py, 0)];
          for (int k = 1; k < D; ++k) m = std::min(m, L[idx(px, py, k)]);
        }
        for (int k = 0; k < D; ++k) {
          long long v = c.at(x, y, k);
          if (inside) {
            long long best = L[idx(px, py, k)];
            if (k > 0) best = std::min(best, L[idx(px, py, k - 1)] + p.p1);
            if (k + 1 < D) best = std::min(best, L[idx(px, py, k + 1)] + p.p1);
            best = std::min(best, m + p.p2);
            v += best - m;
          }
          L[idx(x, y, k)] = v;
          sum[idx(x, y, k)] += v;
        }
      }
    }
  }
  std::vector<std::uint16_t> S(sum.size());
  for (std::size_t i = 0; i < sum.size(); ++i) {
    if (sum[i] < 0 || sum[i] > 65535) throw std::logic_error("aggregate_naive: S outside 16 bits");
    S[i] = static_cast<std::uint16_t>(sum[i]);
  }
  return S;
}

}  // namespace evk::stereo

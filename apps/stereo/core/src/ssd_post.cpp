// The SSD method (Stam's definition, reference.cpp) with the post-processing every method shares:
// winner-take-all statistics for uniqueness and sub-pixel, the right image's map (the same matcher
// on the mirrored, swapped pair), median, LR check, speckle.
#include <algorithm>

#include "core/reference.hpp"
#include "core/ssd.hpp"
#include "evk/parallel.hpp"

namespace evk::stereo {

namespace {
inline int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }
inline int sq(int v) { return v * v; }
}  // namespace

Image8 mirror(const Image8& im) {
  Image8 o = im;
  for (int y = 0; y < im.height; ++y)
    std::reverse(o.pixels.begin() + static_cast<std::ptrdiff_t>(y) * im.width,
                 o.pixels.begin() + static_cast<std::ptrdiff_t>(y + 1) * im.width);
  return o;
}

WtaResult ssd_wta_cpu(const Image8& L, const Image8& R, const Params& p, int threads) {
  validate(p);
  validate_pair(L, R);
  const int W = L.width, H = L.height, r = p.radius(), D = p.count();
  WtaResult w;
  w.width = W;
  w.height = H;
  w.count = D;
  w.min_disparity = p.min_disparity;
  w.left.assign(static_cast<std::size_t>(W) * H, WtaPixel{});
  const std::size_t band = 8;
  const std::size_t nbands = (static_cast<std::size_t>(H) + band - 1) / band;
  parallel_for(nbands, [&](std::size_t b0, std::size_t b1) {
    std::vector<int> col(static_cast<std::size_t>(W + 2 * r)), cost;
    for (std::size_t b = b0; b < b1; ++b) {
      const int y0 = static_cast<int>(b * band), y1 = std::min(H, y0 + static_cast<int>(band));
      cost.assign(static_cast<std::size_t>(y1 - y0) * W * D, 0);
      for (int k = 0; k < D; ++k) {
        const int d = p.min_disparity + k;
        auto diff2 = [&](int c, int y) {
          const int yy = clampi(y, H);
          return sq(int(L.at(clampi(c, W), yy)) - int(R.at(clampi(c - d, W), yy)));
        };
        for (int c = -r; c < W + r; ++c) {
          int s = 0;
          for (int j = -r; j <= r; ++j) s += diff2(c, y0 + j);
          col[static_cast<std::size_t>(c + r)] = s;
        }
        for (int y = y0; y < y1; ++y) {
          if (y > y0)
            for (int c = -r; c < W + r; ++c) col[static_cast<std::size_t>(c + r)] += diff2(c, y + r) - diff2(c, y - 1 - r);
          int s = 0;
          for (int c = 0; c < 2 * r + 1; ++c) s += col[static_cast<std::size_t>(c)];
          for (int x = 0; x < W; ++x) {
            if (x > 0) s += col[static_cast<std::size_t>(x + 2 * r)] - col[static_cast<std::size_t>(x - 1)];
            cost[(static_cast<std::size_t>(y - y0) * W + x) * D + k] = s;
          }
        }
      }
      for (int y = y0; y < y1; ++y)
        for (int x = 0; x < W; ++x) {
          const int* s = &cost[(static_cast<std::size_t>(y - y0) * W + x) * D];
          int best = 0;
          for (int k = 1; k < D; ++k)
            if (s[k] < s[best]) best = k;
          WtaPixel& px = w.left[static_cast<std::size_t>(y) * W + x];
          if (s[best] >= p.min_ssd) continue;  // Stam's rule: strictly below min_ssd
          px.best = best;
          px.s_best = s[best];
          px.s_prev = best > 0 ? s[best - 1] : -1;
          px.s_next = best + 1 < D ? s[best + 1] : -1;
          for (int k = 0; k < D; ++k)
            if ((k < best - 1 || k > best + 1) && (px.s_second < 0 || s[k] < px.s_second)) px.s_second = s[k];
        }
    }
  }, threads);
  return w;
}

DisparityQ ssd_right_map(const DisparityMap& mirrored) {
  DisparityMap m = mirrored;
  for (int y = 0; y < m.height; ++y)
    std::reverse(m.d.begin() + static_cast<std::ptrdiff_t>(y) * m.width, m.d.begin() + static_cast<std::ptrdiff_t>(y + 1) * m.width);
  return to_q(m);
}

StereoResult ssd_cpu(const Image8& L, const Image8& R, const Params& p, const PostParams& post, int threads) {
  validate(p);
  validate(post);
  StereoResult res;
  if (post.uniqueness > 0 || post.subpixel != Subpixel::none)
    res.left = refine_cpu(ssd_wta_cpu(L, R, p, threads), post.uniqueness, post.subpixel);
  else
    res.left = to_q(disparity_cpu(L, R, p, threads));
  if (post.needs_right()) res.right = ssd_right_map(disparity_cpu(mirror(R), mirror(L), p, threads));
  postprocess_cpu(res, post);
  if (!post.right) res.right = {};
  return res;
}

}  // namespace evk::stereo

#include "core/affine/affine_reg.hpp"

#include <chrono>
#include <cstdio>
#include <future>
#include <stdexcept>

#include "core/affine/affine_lts.hpp"
#include "core/pyramid.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

namespace {
using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

class CpuMatcher : public Matcher {
 public:
  CpuMatcher(const Volume& ref, const Mask& rmask, const BlockLayout& layout, const Volume& flo, int threads)
      : rmask_(rmask), layout_(layout), ref_(ref), flo_(flo), threads_(threads) {}
  std::vector<BlockMatch> match(const Mat44& ref2flo) override {
    const auto t0 = Clock::now();
    const std::vector<float> warped = warp_linear_cpu(ref_.geo, flo_, ref2flo, threads_);
    const auto t1 = Clock::now();
    std::vector<BlockMatch> m = match_blocks_cpu(ref_, rmask_, warped, layout_, threads_);
    warp_ms_ += ms_between(t0, t1);
    match_ms_ += ms_between(t1, Clock::now());
    return m;
  }
  void add_times(AffineStageTimes& t) const override {
    t.warp += warp_ms_;
    t.match += match_ms_;
  }

 private:
  double warp_ms_ = 0, match_ms_ = 0;
  const Mask& rmask_;
  const BlockLayout& layout_;
  const Volume& ref_;
  const Volume& flo_;
  int threads_;
};

void check_mask(const Mask& m, const Geometry& g, const std::string& what) {
  if (m.empty()) return;
  if (m.size() != g.voxels()) input_error(what, "mask size differs from its image");
  for (auto v : m)
    if (v) return;
  input_error(what, "mask is empty (no nonzero voxel)");
}
}  // namespace

MatcherFactory cpu_matcher(int threads) {
  return [threads](const LevelImage& ref, const Mask& rmask, const BlockLayout& layout, const LevelImage& flo) {
    return std::unique_ptr<Matcher>(new CpuMatcher(*ref.host, rmask, layout, *flo.host, threads));
  };
}

void check_affine_options(const AffineOptions& o) {
  if (o.levels < 1 || o.levels > 10) input_error("--ln", "must be 1..10");
  if (o.levels_used < 1 || o.levels_used > o.levels) input_error("--lp", "must be 1..--ln");
  if (o.maxit < 1) input_error("--maxit", "must be >= 1");
  if (o.block_percent < 1 || o.block_percent > 100) input_error("--pv", "must be 1..100");
  if (o.inlier_percent < 1 || o.inlier_percent > 100) input_error("--pi", "must be 1..100");
  if (o.rigid_only && o.affine_direct) input_error("--rigid-only", "cannot be combined with --aff-direct");
}

void block_correspondences(const Geometry& ref, const BlockLayout& layout, const std::vector<BlockMatch>& m,
                           const Mat44& ref2flo, std::vector<std::array<double, 3>>& from,
                           std::vector<std::array<double, 3>>& to, bool subvoxel) {
  from.clear();
  to.clear();
  const double h = (kBlockWidth - 1) / 2.0;  // block centre
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (!(m[i].ncc > 0)) continue;
    int x, y, z;
    layout.corner(layout.active[i], x, y, z);
    from.push_back(ref.vox2world.apply(x + h, y + h, z + h));
    const double sx = subvoxel ? m[i].fx : 0.0, sy = subvoxel ? m[i].fy : 0.0, sz = subvoxel ? m[i].fz : 0.0;
    const auto w = ref.vox2world.apply(x + h + m[i].dx + sx, y + h + m[i].dy + sy, z + h + m[i].dz + sz);
    to.push_back(ref2flo.apply(w[0], w[1], w[2]));
  }
}

AffineResult register_affine(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                             const Mat44& init, const AffineOptions& opt, const AffineEngine& engine,
                             const AffineProgress& progress) {
  const MatcherFactory& factory = engine.matcher;
  check_affine_options(opt);
  check_mask(rmask, ref.geo, "--rmask");
  check_mask(fmask, flo.geo, "--fmask");
  if (ref.geo.nz < kBlockWidth || flo.geo.nz < kBlockWidth)
    input_error(ref.geo.nz < kBlockWidth ? "--ref" : "--flo", "must be a 3-D volume (at least 4 slices)");
  AffineResult res;
  AffineStageTimes& times = res.times;
  const auto start = Clock::now();
  const PyramidFn pyramid = engine.pyramid ? engine.pyramid : [&opt](const Volume& v, int levels, int used) {
    return make_image_pyramid(v, levels, used, opt.threads);
  };
  const ImagePyramid rp = pyramid(ref, opt.levels, opt.levels_used);
  const ImagePyramid fp = pyramid(flo, opt.levels, opt.levels_used);
  if (rp.size() != static_cast<std::size_t>(opt.levels_used) || fp.size() != rp.size())
    throw std::logic_error("register_affine: the engine's pyramid has the wrong number of levels");
  const std::vector<Mask> rmp = make_mask_pyramid(ref.geo, rmask, opt.levels, opt.levels_used);
  const std::vector<Mask> fmp = make_mask_pyramid(flo.geo, fmask, opt.levels, opt.levels_used);
  times.pyramid = ms_between(start, Clock::now());

  Mat44 t = init, tb;
  try {
    tb = init.inverse();
  } catch (const std::exception&) {
    input_error("--init", "initial matrix is singular");
  }
  for (int l = 0; l < opt.levels_used; ++l) {
    const auto t0 = Clock::now();
    AffineLevelInfo info;
    info.nx = rp[l].geo.nx;
    info.ny = rp[l].geo.ny;
    info.nz = rp[l].geo.nz;
    BlockLayout lb;  // the backward blocks (symmetric) concurrently with the forward ones
    std::future<BlockLayout> back_blocks;
    if (opt.symmetric)
      back_blocks = std::async(std::launch::async, [&] { return select_blocks(fp[l], fmp[l], opt.block_percent); });
    const BlockLayout lf = select_blocks(rp[l], rmp[l], opt.block_percent);
    if (opt.symmetric) lb = back_blocks.get();
    const auto t1 = Clock::now();
    times.select += ms_between(t0, t1);
    info.blocks = static_cast<int>(lf.active.size());
    info.blocks_back = static_cast<int>(lb.active.size());
    if (lf.active.size() < 8)
      input_error("--ref", "only " + std::to_string(lf.active.size()) + " blocks with contrast at level " +
                               std::to_string(l + 1) + " (need 8; image too small or flat, or mask too small?)");
    if (opt.symmetric && lb.active.size() < 8)
      input_error("--flo", "only " + std::to_string(lb.active.size()) + " blocks with contrast at level " +
                               std::to_string(l + 1) + " (need 8; image too small or flat, or mask too small?)");
    std::unique_ptr<Matcher> mf = factory(rp.levels[l], rmp[l], lf, fp.levels[l]);
    std::unique_ptr<Matcher> mb = opt.symmetric ? factory(fp.levels[l], fmp[l], lb, rp.levels[l]) : nullptr;
    times.upload += ms_between(t1, Clock::now());

    // One direction's fit from its matches (host, double; deterministic, so running the two
    // directions concurrently changes nothing).
    auto solve = [&](const Geometry& g, const BlockLayout& layout, const std::vector<BlockMatch>& m, const Mat44& cur,
                     bool affine, int* matched) {
      std::vector<std::array<double, 3>> from, to;
      block_correspondences(g, layout, m, cur, from, to, opt.subvoxel);
      if (matched) *matched = static_cast<int>(from.size());
      return fit_lts(from, to, opt.inlier_percent, affine);
    };
    auto iterate = [&](int n, bool affine) {
      for (int it = 0; it < n; ++it) {
        const std::vector<BlockMatch> m = mf->match(t);
        std::vector<BlockMatch> mbk;
        if (opt.symmetric) mbk = mb->match(tb);
        const auto l0 = Clock::now();
        if (!opt.symmetric) {
          const LtsResult f = solve(rp[l].geo, lf, m, t, affine, &info.matched_last);
          info.lts_refits += f.refits;
          t = f.m;
        } else {
          std::future<LtsResult> back =
              std::async(std::launch::async, [&] { return solve(fp[l].geo, lb, mbk, tb, affine, nullptr); });
          LtsResult f;
          try {
            f = solve(rp[l].geo, lf, m, t, affine, &info.matched_last);
          } catch (...) {
            back.wait();
            throw;
          }
          const LtsResult b = back.get();
          info.lts_refits += f.refits + b.refits;
          const Mat44 fi = f.m.inverse(), bi = b.m.inverse();
          t = average_log_euclidean(f.m, bi);
          tb = average_log_euclidean(fi, b.m);
        }
        times.lts += ms_between(l0, Clock::now());
        ++info.iterations;
      }
    };
    const int it = l == 0 ? 2 * opt.maxit : opt.maxit;
    if (opt.rigid_only) {
      iterate(it, false);
    } else {
      if (!opt.affine_direct && l == 0) iterate(4 * it, false);
      iterate(it, true);
    }
    mf->add_times(times);
    if (mb) mb->add_times(times);
    info.seconds = ms_between(t0, Clock::now()) / 1e3;
    res.levels.push_back(info);
    if (progress) {
      char buf[240];
      std::snprintf(buf, sizeof buf, "level %d/%d: %dx%dx%d, %d blocks (%d backward), %d iterations, %d LTS refits, %.2f s",
                    l + 1, opt.levels_used, info.nx, info.ny, info.nz, info.blocks, info.blocks_back, info.iterations,
                    info.lts_refits, info.seconds);
      progress(buf);
    }
  }
  times.total = ms_between(start, Clock::now());
  res.affine = t;
  return res;
}

}  // namespace evk::reg_deform

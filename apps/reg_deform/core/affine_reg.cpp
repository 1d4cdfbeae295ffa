#include "affine_reg.hpp"

#include <chrono>
#include <cstdio>

#include "affine_lts.hpp"
#include "evk/error.hpp"
#include "pyramid.hpp"

namespace evk::reg_deform {

namespace {
class CpuMatcher : public Matcher {
 public:
  CpuMatcher(const Volume& ref, const Mask& rmask, const BlockLayout& layout, const Volume& flo, int threads)
      : ref_(ref), rmask_(rmask), layout_(layout), flo_(flo), threads_(threads) {}
  std::vector<BlockMatch> match(const Mat44& ref2flo) override {
    const std::vector<float> warped = warp_linear_cpu(ref_.geo, flo_, ref2flo, threads_);
    return match_blocks_cpu(ref_, rmask_, warped, layout_, threads_);
  }

 private:
  const Volume& ref_;
  const Mask& rmask_;
  const BlockLayout& layout_;
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
  return [threads](const Volume& ref, const Mask& rmask, const BlockLayout& layout, const Volume& flo) {
    return std::unique_ptr<Matcher>(new CpuMatcher(ref, rmask, layout, flo, threads));
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
                           std::vector<std::array<double, 3>>& to) {
  from.clear();
  to.clear();
  const double h = (kBlockWidth - 1) / 2.0;  // block centre
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (!(m[i].ncc > 0)) continue;
    int x, y, z;
    layout.corner(layout.active[i], x, y, z);
    from.push_back(ref.vox2world.apply(x + h, y + h, z + h));
    const auto w = ref.vox2world.apply(x + h + m[i].dx, y + h + m[i].dy, z + h + m[i].dz);
    to.push_back(ref2flo.apply(w[0], w[1], w[2]));
  }
}

AffineResult register_affine(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                             const Mat44& init, const AffineOptions& opt, const MatcherFactory& factory,
                             const AffineProgress& progress) {
  check_affine_options(opt);
  check_mask(rmask, ref.geo, "--rmask");
  check_mask(fmask, flo.geo, "--fmask");
  if (ref.geo.nz < kBlockWidth || flo.geo.nz < kBlockWidth)
    input_error(ref.geo.nz < kBlockWidth ? "--ref" : "--flo", "must be a 3-D volume (at least 4 slices)");
  const std::vector<Volume> rp = make_pyramid(ref, opt.levels, opt.levels_used, opt.threads);
  const std::vector<Volume> fp = make_pyramid(flo, opt.levels, opt.levels_used, opt.threads);
  const std::vector<Mask> rmp = make_mask_pyramid(ref.geo, rmask, opt.levels, opt.levels_used);
  const std::vector<Mask> fmp = make_mask_pyramid(flo.geo, fmask, opt.levels, opt.levels_used);

  AffineResult res;
  Mat44 t = init, tb;
  try {
    tb = init.inverse();
  } catch (const std::exception&) {
    input_error("--init", "initial matrix is singular");
  }
  std::vector<std::array<double, 3>> from, to;
  for (int l = 0; l < opt.levels_used; ++l) {
    const auto t0 = std::chrono::steady_clock::now();
    AffineLevelInfo info;
    info.nx = rp[l].geo.nx;
    info.ny = rp[l].geo.ny;
    info.nz = rp[l].geo.nz;
    const BlockLayout lf = select_blocks(rp[l], rmp[l], opt.block_percent);
    BlockLayout lb;
    if (opt.symmetric) lb = select_blocks(fp[l], fmp[l], opt.block_percent);
    info.blocks = static_cast<int>(lf.active.size());
    info.blocks_back = static_cast<int>(lb.active.size());
    if (lf.active.size() < 8)
      input_error("--ref", "only " + std::to_string(lf.active.size()) + " blocks with contrast at level " +
                               std::to_string(l + 1) + " (need 8; image too small or flat, or mask too small?)");
    if (opt.symmetric && lb.active.size() < 8)
      input_error("--flo", "only " + std::to_string(lb.active.size()) + " blocks with contrast at level " +
                               std::to_string(l + 1) + " (need 8; image too small or flat, or mask too small?)");
    std::unique_ptr<Matcher> mf = factory(rp[l], rmp[l], lf, fp[l]);
    std::unique_ptr<Matcher> mb = opt.symmetric ? factory(fp[l], fmp[l], lb, rp[l]) : nullptr;

    auto iterate = [&](int n, bool affine) {
      for (int it = 0; it < n; ++it) {
        const std::vector<BlockMatch> m = mf->match(t);
        block_correspondences(rp[l].geo, lf, m, t, from, to);
        info.matched_last = static_cast<int>(from.size());
        const Mat44 fwd = fit_lts(from, to, opt.inlier_percent, affine).m;
        if (!opt.symmetric) {
          t = fwd;
        } else {
          const std::vector<BlockMatch> mbk = mb->match(tb);
          block_correspondences(fp[l].geo, lb, mbk, tb, from, to);
          const Mat44 bwd = fit_lts(from, to, opt.inlier_percent, affine).m;
          const Mat44 fi = fwd.inverse(), bi = bwd.inverse();
          t = average_log_euclidean(fwd, bi);
          tb = average_log_euclidean(fi, bwd);
        }
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
    info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.levels.push_back(info);
    if (progress) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "level %d/%d: %dx%dx%d, %d blocks (%d backward), %d iterations, %.2f s", l + 1,
                    opt.levels_used, info.nx, info.ny, info.nz, info.blocks, info.blocks_back, info.iterations,
                    info.seconds);
      progress(buf);
    }
  }
  res.affine = t;
  return res;
}

}  // namespace evk::reg_deform

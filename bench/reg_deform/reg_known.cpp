// reg_known: known-deformation recovery for `register` (accuracy, not speed). For each seed: a random
// smooth cubic B-spline transformation (control points every --truth-spacing mm, largest displacement
// --max-mm, shrunk until the minimum Jacobian determinant is >= 0.5), the image warped through it
// becomes the reference, the image itself the floating image; `register` (defaults, identity start)
// recovers the transformation; the error |recovered(x) - truth(x)| over the head (voxels above 10% of
// the 99th-percentile intensity of the reference). One JSON object per line.
//   reg_known IMAGE.nii.gz [--seeds 1,2,3] [--max-mm 8] [--truth-spacing 20] [--backend cpu|gpu] [--maxit 150]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/register/reg_grid.hpp"
#include "core/register/reg_jacobian_cpu.hpp"
#include "core/register/reg_known_warp.hpp"
#include "core/register/reg_register.hpp"
#include "io/nifti_io.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/register/reg_engine_gpu.hpp"
#endif

namespace rd = evk::reg_deform;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: reg_known IMAGE [--seeds 1,2,3] [--max-mm 8] [--truth-spacing 20] [--backend cpu|gpu] [--maxit 150]\n");
    return 2;
  }
  std::string image_path = argv[1], seeds = "1,2,3", backend = "cpu";
  double max_mm = 8, truth_spacing = 20;
  int maxit = 150;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--seeds") seeds = v;
    else if (k == "--max-mm") max_mm = std::stod(v);
    else if (k == "--truth-spacing") truth_spacing = std::stod(v);
    else if (k == "--backend") backend = v;
    else if (k == "--maxit") maxit = std::stoi(v);
    else {
      std::fprintf(stderr, "reg_known: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  try {
    const rd::Volume image = rd::read_volume(image_path);
    rd::EngineFactory factory = rd::make_cpu_engine;
#if defined(EVK_HAVE_CUDA)
    if (backend == "gpu") factory = [](const rd::LevelInput& in) { return rd::make_gpu_engine(in); };
#endif
    if (backend != "cpu" && backend != "gpu") throw std::runtime_error("--backend: cpu or gpu");
    std::stringstream ss(seeds);
    std::string tok;
    while (std::getline(ss, tok, ',')) {
      const std::uint64_t seed = std::stoull(tok);
      const rd::KnownWarp kw = rd::make_known_warp(image, truth_spacing, max_mm, seed);
      const rd::Mask head = rd::intensity_mask(kw.reference, 0.1);
      rd::RegisterOptions o;
      o.max_iterations = maxit;
      o.has_affine = true;  // identity start
      const auto t0 = std::chrono::steady_clock::now();
      const rd::RegisterResult r = rd::register_images(kw.reference, image, {}, {}, o, factory);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const rd::Grid id = rd::make_grid3(kw.reference.geo, {r.grid.sx, r.grid.sy, r.grid.sz});
      const rd::WarpError before = rd::warp_error(kw.reference.geo, id, kw.truth, head);
      const rd::WarpError after = rd::warp_error(kw.reference.geo, r.grid, kw.truth, head);
      const double jmin = rd::voxel_jacobian_stats(kw.reference.geo, r.grid, head).min;
      // a tighter mask (above 30 %): the tissue, without the scalp's faint edge and the background
      const rd::Mask tissue = rd::intensity_mask(kw.reference, 0.3);
      const rd::WarpError tb = rd::warp_error(kw.reference.geo, id, kw.truth, tissue);
      const rd::WarpError ta = rd::warp_error(kw.reference.geo, r.grid, kw.truth, tissue);
      std::printf("{\"image\": \"%s\", \"backend\": \"%s\", \"seed\": %llu, \"max_displacement_mm\": %.3f, "
                  "\"head_voxels\": %zu, \"before_mean_mm\": %.4f, \"before_p95_mm\": %.4f, \"mean_mm\": %.4f, "
                  "\"p95_mm\": %.4f, \"max_mm\": %.4f, \"tissue_voxels\": %zu, \"tissue_before_mean_mm\": %.4f, "
                  "\"tissue_mean_mm\": %.4f, \"tissue_p95_mm\": %.4f, \"min_jacobian\": %.4f, \"seconds\": %.2f}\n",
                  image_path.c_str(), backend.c_str(), static_cast<unsigned long long>(seed), kw.max_displacement,
                  after.voxels, before.mean, before.p95, after.mean, after.p95, after.max, ta.voxels, tb.mean, ta.mean,
                  ta.p95, jmin, secs);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reg_known: %s\n", e.what());
    return 2;
  }
  return 0;
}

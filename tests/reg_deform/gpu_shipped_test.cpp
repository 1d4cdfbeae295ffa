// GPU: for every shipped reg_deform variant that `--kernel auto` may pick on this GPU (compute
// capability up to the GPU's), `auto` picks an evolved variant for a job of each of its size
// classes, loads it from the embedded fatbin (no NVRTC), and its fields are within 1e-3 mm (the
// paper's tolerance) of the CPU reference at every voxel: the paper's 217^3 random case, a dense
// 1 mm and a dense 2 mm head (../shared/data brains with a perturbed grid; synthetic volumes of
// the same size when absent). Output poisoned first.
#include <gtest/gtest.h>

#include <cmath>

#include "core/field/field_cpu.hpp"
#include "core/field/gpu_field.hpp"
#include "core/field/grid_make.hpp"
#include "core/field/random_case.hpp"
#include "evk/cuda_check.hpp"
#include "evk_testing.hpp"
#include "gi/kernel_variant.hpp"
#include "io/nifti_io.hpp"
#include "shipped.hpp"

namespace rd = evk::reg_deform;

namespace {
struct Job {
  rd::Geometry geo;
  rd::Grid grid;
  rd::Mask mask;
  std::string describe;
};

Job job_of_class(const std::string& cls) {
  Job j;
  if (cls == "paper") {
    rd::RandomCaseOptions o;
    o.seed = 21;
    rd::RandomCase rc = rd::make_random_case(o);
    j.geo = rc.image.geo;
    j.grid = rc.grid;
    j.mask = rc.mask;
    j.describe = "random 217^3 (masked)";
    return j;
  }
  const bool one_mm = cls == "head1mm";
  const auto dir = evk::testing::shared_data_dir();
  const auto file = dir.empty() ? std::filesystem::path()
                                : dir / "brain" / (one_mm ? "icbm152_2009a_t1_1mm.nii.gz" : "mni152_t1_2mm.nii.gz");
  if (!file.empty() && std::filesystem::exists(file)) {
    j.geo = rd::read_volume(file).geo;
    j.describe = file.filename().string();
  } else {
    j.geo.nx = one_mm ? 197 : 91;
    j.geo.ny = one_mm ? 233 : 109;
    j.geo.nz = one_mm ? 189 : 91;
    j.geo.dx = j.geo.dy = j.geo.dz = one_mm ? 1 : 2;
    j.geo.vox2world = rd::Mat44::identity();
    j.describe = "synthetic head-sized volume";
  }
  j.grid = rd::make_grid(j.geo, 5);
  rd::SplitMix64 rng(5);
  for (auto& x : j.grid.data) x = static_cast<float>(x + rng.uniform(-6, 6));
  return j;
}
}  // namespace

TEST(ShippedRegDeformGpu, AutoPicksItLoadsTheFatbinAndMatchesTheCpu) {
  EVK_REQUIRE_GPU();
  const auto& dev = evk::gpu_environment().devices[0];
  const evk::Registry reg = rd::make_registry();
  int checked = 0;
  for (const auto& v : evk::testing::builtin_variants(reg)) {
    if (v.cc > dev.cc()) continue;  // auto may pick it here (the chain prefers this device's own)
    std::vector<std::string> classes = v.classes;
    if (classes.empty()) classes = {"paper", "head1mm", "head2mm"};
    for (const auto& cls : classes) {
      const Job j = job_of_class(cls);
      evk::Request req = rd::make_request(j.geo.nx, j.geo.ny, j.geo.nz, 5, 5, 5);
      req.size_class = cls;  // the paper's class is not told apart from a 1 mm head by size alone
      const evk::Selection s = reg.select("reg_deform", evk::DeviceKey{dev.cc(), dev.name}, "auto", req);
      ASSERT_FALSE(s.variant.is_original()) << v.id << " " << cls << ": " << s.rule;
      const rd::KernelChoice k = rd::kernel_for_variant(s.variant);
      rd::gpu::FieldOptions fo;
      fo.config = k.config;
      fo.source = k.source;
      rd::gpu::FieldEngine eng(j.geo, j.mask, 5, 5, 5, fo);
      EXPECT_EQ(eng.kernel_origin(), "embedded fatbin (" + s.variant.id + ")");
      eng.set_grid(j.grid);
      eng.poison();
      eng.compute(false);
      EVK_CUDA(cudaDeviceSynchronize());
      const rd::Field got = eng.download(false);
      const rd::Field want = rd::compute_field_cpu(j.geo, j.grid, j.mask);
      double max_err = 0;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < want.data.size(); ++i) {
        if (!std::isfinite(got.data[i])) ++bad;
        else max_err = std::max(max_err, double(std::fabs(got.data[i] - want.data[i])));
      }
      EXPECT_EQ(bad, 0u);
      EXPECT_LE(max_err, 1e-3) << s.variant.id << " on " << j.describe;
      std::printf("[measured] %s on %s (%s): max |err| %.3g mm\n", s.variant.id.c_str(), j.describe.c_str(), cls.c_str(),
                  max_err);
      ++checked;
    }
  }
  if (!checked) GTEST_SKIP() << "no shipped reg_deform variant for " << dev.name;
}

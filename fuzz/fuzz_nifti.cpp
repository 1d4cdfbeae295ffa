// NIfTI-1/NIfTI-2 (plain or gzip) as `reg_deform` reads them: scalar volumes, masks, and the
// transformation reader with its grid/field checks against a fixed reference; an accepted grid is
// used to compute a (tiny) field. Bad input must end in InputError.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "evk/error.hpp"
#include "core/field/field_cpu.hpp"
#include "core/field/grid_make.hpp"
#include "fuzz_util.hpp"
#include "io/nifti_io.hpp"

namespace rd = evk::reg_deform;

namespace {
const rd::Geometry& reference() {
  static const rd::Geometry ref = rd::Geometry::make(7, 6, 5, 1.0, 1.0, 1.0, {-3, -2, -2});
  return ref;
}
}  // namespace

// With $EVK_FUZZ_WRITE_SEEDS set: writes the seed corpus (volumes of the fixed reference's grid in
// float and uint8, NIfTI-1 and -2, gzip; its control-point grid; deformation and displacement
// fields) into that directory and exits (fuzz/make_seeds.sh).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("EVK_FUZZ_WRITE_SEEDS");
  if (!dir) return 0;
  const std::filesystem::path d(dir);
  rd::Volume v;
  v.geo = reference();
  v.data.resize(v.geo.voxels());
  for (std::size_t i = 0; i < v.data.size(); ++i) v.data[i] = static_cast<float>(i % 11) - 3.5f;
  rd::write_volume(d / "volume.nii", v);
  rd::write_volume(d / "volume2.nii", v, {2});
  rd::write_volume(d / "volume.nii.gz", v);
  rd::write_mask(d / "mask.nii", v.geo, rd::Mask(v.geo.voxels(), 1));
  rd::Grid g = rd::make_grid(v.geo, 3);
  for (std::size_t i = 0; i < g.data.size(); ++i) g.data[i] += static_cast<float>(i % 5) * 0.1f;
  rd::write_grid(d / "grid.nii", g);
  rd::write_grid(d / "grid2.nii", g, {2});
  rd::attach_grid(g, v.geo, "grid");
  rd::Field f = rd::compute_field_cpu(v.geo, g);
  rd::write_field(d / "deformation.nii", f);
  f.displacement = true;
  rd::write_field(d / "displacement.nii.gz", f);
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const auto path = evk::fuzz::put(gz ? "in.nii.gz" : "in.nii", evk::fuzz::view(data, size));
  const rd::Geometry& ref = reference();
  try {
    const rd::Volume v = rd::read_volume(path);
    if (v.data.size() != v.geo.voxels()) __builtin_trap();
    for (float x : v.data)
      if (!std::isfinite(x)) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  try {
    rd::read_mask(path, ref);
  } catch (const evk::InputError&) {
  }
  try {
    const rd::Transformation t = rd::read_transformation(path, ref);
    if (t.kind == rd::TransKind::grid) {
      const rd::Field f = rd::compute_field_cpu(ref, t.grid);
      if (f.data.size() != 3 * ref.voxels()) __builtin_trap();
    } else if (t.field.data.size() != 3 * ref.voxels()) {
      __builtin_trap();
    }
  } catch (const evk::InputError&) {
  }
  return 0;
}

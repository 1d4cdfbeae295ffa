#include "core/kernel_config.hpp"


#include "evk/error.hpp"

namespace evk::reg_deform {

std::vector<std::string> KernelConfig::defines() const {
  std::vector<std::string> d;
  if (const_bspline) d.push_back("-Dc_UseBSpline=1");
  if (const_spacing) d.push_back("-Dc_controlPointVoxelSpacing=5");
  if (constant_basis) d.push_back("-DconstantBasis=1");
  if (basis_a) d.push_back("-DBasisA=1");
  if (directx_basis) d.push_back("-DdirectxBasis=1");
  if (rem_x) d.push_back("-DRemX=1");
  return d;
}

std::vector<std::string> KernelConfig::compile_options() const {
  auto d = defines();
  d.push_back("-DBLOCK_SIZE=" + std::to_string(block_size));
  return d;
}

std::string KernelConfig::describe() const {
  std::string s;
  auto add = [&](bool on, const char* n) {
    if (on) s += (s.empty() ? "" : "+") + std::string(n);
  };
  add(const_bspline, "c_UseBSpline");
  add(const_spacing, "c_controlPointVoxelSpacing");
  add(constant_basis, "constantBasis");
  add(basis_a, "BasisA");
  add(directx_basis, "directxBasis");
  add(rem_x, "RemX");
  return (s.empty() ? "default" : s) + " bs" + std::to_string(block_size);
}

std::map<std::string, std::string> KernelConfig::to_map() const {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  return {{"c_UseBSpline", b(const_bspline)}, {"c_controlPointVoxelSpacing", b(const_spacing)},
          {"constantBasis", b(constant_basis)}, {"BasisA", b(basis_a)},
          {"directxBasis", b(directx_basis)}, {"RemX", b(rem_x)},
          {"BLOCK_SIZE", std::to_string(block_size)}};
}

KernelConfig KernelConfig::from_map(const std::map<std::string, std::string>& m) {
  KernelConfig c;
  auto flag = [](const std::string& k, const std::string& v) {
    if (v == "true" || v == "1") return true;
    if (v == "false" || v == "0") return false;
    input_error(k, "'" + v + "' is not true or false");
  };
  for (const auto& [k, v] : m) {
    if (k == "c_UseBSpline") c.const_bspline = flag(k, v);
    else if (k == "c_controlPointVoxelSpacing") c.const_spacing = flag(k, v);
    else if (k == "constantBasis") c.constant_basis = flag(k, v);
    else if (k == "BasisA") c.basis_a = flag(k, v);
    else if (k == "directxBasis") c.directx_basis = flag(k, v);
    else if (k == "RemX") c.rem_x = flag(k, v);
    else if (k == "BLOCK_SIZE") {
      int b = 0;
      try {
        b = std::stoi(v);
      } catch (const std::exception&) {
        b = 0;
      }
      if (b < 32 || b > 1024 || b % 32) input_error(k, "'" + v + "' is not a multiple of 32 in [32, 1024]");
      c.block_size = b;
    } else {
      input_error(k, "unknown reg_deform configuration parameter");
    }
  }
  return c;
}

std::vector<KernelConfig> KernelConfig::all_combinations(int block_size) {
  std::vector<KernelConfig> v;
  for (int bits = 0; bits < 64; ++bits) {
    KernelConfig c;
    c.const_bspline = bits & 1;
    c.const_spacing = bits & 2;
    c.constant_basis = bits & 4;
    c.basis_a = bits & 8;
    c.directx_basis = bits & 16;
    c.rem_x = bits & 32;
    c.block_size = block_size;
    v.push_back(c);
  }
  return v;
}

std::vector<std::string> ExpertConfig::compile_options() const { return {"-DTILE_Y=" + std::to_string(tile_y)}; }
std::string ExpertConfig::describe() const { return "expert tile 32x" + std::to_string(tile_y); }
std::map<std::string, std::string> ExpertConfig::to_map() const { return {{"TILE_Y", std::to_string(tile_y)}}; }
ExpertConfig ExpertConfig::from_map(const std::map<std::string, std::string>& m) {
  ExpertConfig c;
  for (const auto& [k, v] : m) {
    if (k != "TILE_Y") input_error(k, "unknown reg_deform_expert configuration parameter");
    if (v == "8" || v == "16" || v == "32") c.tile_y = std::stoi(v);
    else input_error(k, "'" + v + "' is not 8, 16 or 32");
  }
  return c;
}

// The GI problem's classes of a dense field (gi_problem.cpp class_of): a head at 2 mm (~0.9 M voxels)
// or at 1 mm (~8.7 M voxels).
std::string size_class_of(long long voxels) { return voxels > 3000000 ? "head1mm" : "head2mm"; }

}  // namespace evk::reg_deform

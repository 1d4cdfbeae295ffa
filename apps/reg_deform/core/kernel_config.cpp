#include "kernel_config.hpp"

#include <cctype>

#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "gi_problem.hpp"

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

std::string KernelChoice::describe() const {
  if (expert) return (evolved() ? "evolved genome '" + genome + "', " : std::string()) + expert_config.describe();
  return evolved() ? "evolved genome '" + genome + "', " + config.describe() : "original " + config.describe();
}

KernelChoice kernel_for_variant(const Variant& v) {
  KernelChoice k;
  k.expert = v.kernel == kExpertKernel;
  std::string body = v.genome;
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back()))) body.pop_back();
  if (body.empty()) return k;  // the original (or an empty genome file): the embedded kernel
  const std::string what = v.path.empty() ? "kernel variant '" + v.id + "'" : v.path;
  if (!v.kernel.empty() && v.kernel != kPaperKernel && v.kernel != kExpertKernel)
    input_error(what, "genome is for kernel '" + v.kernel + "', not 'reg_deform' or 'reg_deform_expert'");
  try {
    const auto problem = k.expert ? make_expert_gi_problem() : make_gi_problem();
    const evk::gi::Variant gv = evk::gi::apply_genome(*problem, body);
    if (k.expert) k.expert_config = ExpertConfig::from_map(gv.config);
    else k.config = KernelConfig::from_map(gv.config);
    k.source = gv.source;
  } catch (const InputError& e) {
    input_error(what, e.what());
  }
  k.genome = body;
  return k;
}

KernelPick pick_kernel(const Registry& reg, const DeviceKey& device, const std::string& choice, const Request& request) {
  std::string kernel = kPaperKernel, how = choice;
  if (choice == "expert") {
    kernel = kExpertKernel;
    how = "original";
  } else if (choice != "auto" && choice != "original" && choice != "evolved") {
    kernel = read_genome_file(choice).kernel;  // InputError naming the file when unreadable
    if (kernel != kExpertKernel) kernel = kPaperKernel;  // select() names any other kernel as the error
  }
  const Selection s = reg.select(kernel, device, how, request);
  KernelPick p;
  p.kernel = kernel_for_variant(s.variant);
  p.variant = choice == "expert" ? std::string("expert (--kernel expert)") : s.variant.id + " (" + s.rule + ")";
  if (p.kernel.expert && choice != "expert") p.variant = "expert " + p.variant;
  return p;
}

Registry make_registry() {
  Registry reg;
  reg.add_kernel(kPaperKernel);
  reg.add_kernel(kExpertKernel);
  reg.add_builtin();
  add_installed_variants(reg);  // an installed share/evokernels/evolved (ids built in are skipped)
  return reg;
}

// The GI problem's classes of a dense field (gi_problem.cpp class_of): a head at 2 mm (~0.9 M voxels)
// or at 1 mm (~8.7 M voxels).
std::string size_class_of(long long voxels) { return voxels > 3000000 ? "head1mm" : "head2mm"; }

Request make_request(int nx, int ny, int nz, double sx, double sy, double sz) {
  Request r;
  const long long voxels = static_cast<long long>(nx) * ny * nz;
  r.size_class = size_class_of(voxels);
  r.props = {{"voxels", static_cast<double>(voxels)}, {"dense", 1}};
  if (sx == sy && sy == sz) r.props["spacing"] = sx;
  return r;
}

}  // namespace evk::reg_deform

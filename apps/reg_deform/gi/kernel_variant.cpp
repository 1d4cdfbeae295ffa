#include "gi/kernel_variant.hpp"

#include <cctype>

#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "gi/gi_problem.hpp"

namespace evk::reg_deform {

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

Request make_request(int nx, int ny, int nz, double sx, double sy, double sz) {
  Request r;
  const long long voxels = static_cast<long long>(nx) * ny * nz;
  r.size_class = size_class_of(voxels);
  r.props = {{"voxels", static_cast<double>(voxels)}, {"dense", 1}};
  if (sx == sy && sy == sz) r.props["spacing"] = sx;
  return r;
}

}  // namespace evk::reg_deform

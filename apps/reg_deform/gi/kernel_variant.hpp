// How a dispatch Variant (the original, or an evolved genome: built-in, overlay or --kernel FILE)
// maps onto kernel source + configuration, the tool's registry, and what a job asks of a variant.
#pragma once
#include <string>

#include "core/kernel_config.hpp"
#include "evk/dispatch.hpp"

namespace evk::reg_deform {

// What a dispatch variant runs: the kernel source (empty = the embedded original, run from the
// nvcc fatbin) and its configuration. A genome is applied to the GI problem's kernel
// (evk::gi::apply_genome); a malformed genome or one that does not fit this kernel's grammar is an
// InputError naming the genome file (or variant id).
// expert: the variant is of kernel "reg_deform_expert" (the expert dense-field seed or a genome of
// it): source and expert_config are then that kernel's.
struct KernelChoice {
  KernelConfig config;
  std::string source;  // empty: the embedded original
  std::string genome;  // the genome text ("" for the original)
  bool expert = false;
  ExpertConfig expert_config;
  bool evolved() const { return !genome.empty(); }
  std::string describe() const;  // "original default bs192", "evolved genome '...', ...", "expert tile 32x32"
};
KernelChoice kernel_for_variant(const Variant& v);

// --kernel for a field job: "auto" | "original" | "evolved" (the paper kernel's variants), "expert"
// (the expert dense-field seed), or a genome FILE (of either kernel, by its '# kernel:' line).
// `variant` describes the choice for --json / -v ("sm90-h200-paper217 (same compute capability ...)").
struct KernelPick {
  KernelChoice kernel;
  std::string variant;
};
KernelPick pick_kernel(const Registry& reg, const DeviceKey& device, const std::string& choice, const Request& request);

// The registry of reg_deform kernels: kernel "reg_deform" with the variants compiled into this
// binary (kernels/evolved/reg_deform), and kernel "reg_deform_expert" (the expert seed; genomes of
// it from `reg_deform gi-expert`).
Registry make_registry();
// What a field job asks of a kernel variant: its size class; voxels and the control-point spacing
// in voxels (spacing 5 in every axis runs the evolvable tile kernel, others the generic one).
Request make_request(int nx, int ny, int nz, double sx, double sy, double sz);

}  // namespace evk::reg_deform

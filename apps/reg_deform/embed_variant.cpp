// Build-time generator for shipped reg_deform variants (cmake/EvkEvolved.cmake): the NVRTC request
// Kernels::load makes for a genome (its configuration does not depend on the job), so the fatbin
// nvcc builds from it is found at run time.
#include "core/field/gpu_field.hpp"
#include "core/field/gpu_field_expert.hpp"
#include "evk/embed_variant.hpp"
#include "gi/kernel_variant.hpp"

int main(int argc, char** argv) {
  return evk::embed_variant_main(argc, argv, [](const evk::Variant& v) {
    const evk::reg_deform::KernelChoice k = evk::reg_deform::kernel_for_variant(v);
    if (k.expert) return evk::reg_deform::gpu::expert_request(k.expert_config, k.source, 90);  // a genome of the expert kernel
    return evk::reg_deform::gpu::kernel_request(k.config, k.source, 90);
  });
}

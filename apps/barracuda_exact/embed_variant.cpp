// Build-time generator for shipped barracuda_exact variants (cmake/EvkEvolved.cmake): the NVRTC
// request load_exact_kernel makes for a genome (its configuration does not depend on the job), so
// the fatbin nvcc builds from it is found at run time.
#include "core/gpu_exact.hpp"
#include "gi/kernel_variant.hpp"
#include "evk/embed_variant.hpp"

int main(int argc, char** argv) {
  return evk::embed_variant_main(argc, argv, [](const evk::Variant& v) {
    const evk::barracuda_exact::KernelVariant k = evk::barracuda_exact::resolve_kernel_variant(v);
    return evk::barracuda_exact::exact_kernel_request(k.config, 90, k.source);
  });
}

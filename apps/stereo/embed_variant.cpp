// Build-time generator for shipped stereo variants (cmake/EvkEvolved.cmake): the NVRTC request the
// GPU backend makes for a genome on the default job (window 11), so the fatbin nvcc builds from it
// is found by load_kernel at run time.
#include "evk/embed_variant.hpp"
#include "core/ssd_gpu.hpp"
#include "core/gpu_frame.hpp"

int main(int argc, char** argv) {
  return evk::embed_variant_main(argc, argv, [](const evk::Variant& v) {
    const evk::stereo::KernelVariant k = evk::stereo::make_kernel_variant(v);
    const auto ks = evk::stereo::KernelSettings::from(k.config, evk::stereo::Params{}.radius());
    return evk::stereo::kernel_request(ks, 90, k.source);
  });
}

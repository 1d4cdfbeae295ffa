// main() of an app's build-time generator (cmake/EvkEvolved.cmake): the NVRTC request a tool's
// run-time path makes for a shipped genome, written out for nvcc.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <functional>

#include "evk/cuda_library.hpp"
#include "evk/dispatch.hpp"

namespace evk {
// main() of an app's build-time generator (`<app>_embed_variant GENOME OUT.cu OUT.opts`): reads the
// genome file, asks `request` for the NVRTC request the tool's run-time path makes for it on the
// default job, and writes its source and options (one per line). Errors: one line, exit 2.
int embed_variant_main(int argc, char** argv, const std::function<NvrtcRequest(const Variant&)>& request);
}  // namespace evk
#endif

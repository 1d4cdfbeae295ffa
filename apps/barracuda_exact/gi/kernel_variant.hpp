// A dispatch-registry variant of the exact-match kernel turned into what the GPU backend compiles:
// the kernel source (the original, or the original patched by the variant's genome through the GI
// engine) and the 15-parameter configuration, which also sets the launch geometry.
#pragma once
#include <string>

#include "evk/dispatch.hpp"
#include "evk/gi/problem.hpp"

namespace evk::barracuda_exact {

struct KernelVariant {
  std::string source;   // empty: the original kernel text; else evk::gi::apply's output (the source gi run timed)
  gi::Config config;    // validated, every parameter present
  int edits = 0;        // code edits in the genome (0: the original code, possibly another config)
  std::string describe() const;  // "original code, defaults" / "3 code edits, BLOCK_W=128 kl_par=true"
};

// Applies v's genome (empty for the original). Throws InputError naming v's file (or id) for a
// malformed genome, a genome of another kernel's grammar, or an illegal configuration.
KernelVariant resolve_kernel_variant(const Variant& v);

// The registry of barracuda_exact kernels: kernel "barracuda_exact" with the variants compiled into
// this binary (kernels/evolved/barracuda_exact).
Registry make_registry();
// Size class of a reference (the classes the gi problem validates in): "ecoli-sized" below 50 Mbp
// (an index that fits in a Hopper's L2), else "500mbp" (far larger than L2).
std::string size_class_of(long long ref_length);
// What a map job asks of a kernel variant: its size class and ref_length (and read_length when known).
Request make_request(long long ref_length, int read_length = 0);

}  // namespace evk::barracuda_exact

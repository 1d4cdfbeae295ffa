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

// The inexact kernel's variant (problem barracuda_inexact, `gi-inexact`): its source (empty: the
// original text) and its configuration (BLOCK_W, STACK_CAP, THREADS_PER_SM, every one present).
struct InexactVariant {
  std::string source;
  gi::Config config;
  int edits = 0;
  std::string describe() const;  // as KernelVariant's
};
// As resolve_kernel_variant, with the inexact kernel's grammar and configuration.
InexactVariant resolve_inexact_variant(const Variant& v);

// The registry of barracuda_exact kernels: kernel "barracuda_exact" with the variants compiled into
// this binary (kernels/evolved/barracuda_exact), and kernel "barracuda_inexact" (variants from the
// overlay, e.g. installed by `gi-inexact evolve`; none ship yet).
Registry make_registry();
// Size class of a reference (the classes the gi problem validates in): "ecoli-sized" below 50 Mbp
// (an index that fits in a Hopper's L2), else "500mbp" (far larger than L2).
std::string size_class_of(long long ref_length);
// What a map job asks of a kernel variant: its size class and ref_length (and read_length when known).
Request make_request(long long ref_length, int read_length = 0);
// What an inexact map job asks of the inexact kernel: the class of its settings (inexact_size_class),
// seed_len and ref_length.
Request make_inexact_request(int seed_len, long long ref_length);

}  // namespace evk::barracuda_exact

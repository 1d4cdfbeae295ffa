// Evolved kernel variants shipped inside a tool: every genome under kernels/evolved/<tool>/ is
// applied at build time and compiled by nvcc into a fatbin (cmake/EvkEvolved.cmake), and each
// generated translation unit registers itself here before main(). At run time a tool looks its
// exact NVRTC request (source text + options) up: a hit loads the fatbin, so an evolved variant
// runs with no NVRTC compile; a miss (another window, spacing, or a genome file) goes to NVRTC.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace evk {

struct EmbeddedVariant {
  const char* kernel;             // logical kernel name, e.g. "stereo"
  const char* id;                 // the genome file's stem, e.g. "sm90-h200-1080p"
  const char* genome_file;        // the whole genome file (header + genome text)
  const char* source;             // the applied kernel source the fatbin was compiled from
  const char* options;            // its NVRTC options, one per line
  const unsigned char* fatbin;    // nvcc fatbin for CMAKE_CUDA_ARCHITECTURES (size 0: CPU-only build)
  std::size_t fatbin_size;
};

// Called by the generated translation units (static initialisers); the pointer must stay valid.
void register_embedded_variant(const EmbeddedVariant* v);
// Every registered variant (of one kernel when `kernel` is not empty), in registration order.
std::vector<const EmbeddedVariant*> embedded_variants(const std::string& kernel = "");
// The variant built from exactly this source and these options (order matters), with a fatbin;
// nullptr when there is none, or when the lookup is switched off (below).
const EmbeddedVariant* find_embedded_variant(const std::string& source, const std::vector<std::string>& options);
// Switches the run-time lookup off (false) or on again (true, the default): switched off, every
// variant compiles with NVRTC as before variants were shipped (benchmarks measuring that path; the
// tools' hidden --no-embedded-variants flag).
void set_embedded_variants_enabled(bool on);

}  // namespace evk

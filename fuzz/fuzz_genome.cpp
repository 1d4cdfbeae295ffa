// Genome files as `--kernel FILE`, the overlay and `gi validate/minimize/apply` read them: the
// header ('# kernel:', '# cc:' ...), then the genome text, parsed against the named tool's grammar
// and applied to its kernel. Bad input must end in InputError.
#include <cstddef>
#include <cstdint>

#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "fuzz_util.hpp"
#include "gi_grammars.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& k = evk::fuzz::Kernels::get();
  const auto path = evk::fuzz::put("in.genome", evk::fuzz::view(data, size));
  try {
    const evk::Variant v = evk::read_genome_file(path);
    for (std::size_t i = 0; i < k.problems.size(); ++i) {
      if (k.problems[i]->name() != v.kernel) continue;
      const evk::gi::Genome g = evk::gi::parse_genome(k.grammars[i], v.genome, path.string());
      if (evk::gi::parse_genome(k.grammars[i], evk::gi::format_genome(k.grammars[i], g)) != g) __builtin_trap();
      const evk::gi::Variant out = evk::gi::apply(k.grammars[i], g);
      if (out.source.empty()) __builtin_trap();
    }
  } catch (const evk::InputError&) {
  }
  return 0;
}

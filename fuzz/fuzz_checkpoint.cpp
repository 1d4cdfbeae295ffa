// The GI run directory as `gi run --resume` and `gi report` read it: checkpoint.json (population
// genomes parsed against a tool's grammar, tabu hashes, RNG state, history) and generations.jsonl.
// A damaged run directory must end in InputError.
#include <cstddef>
#include <cstdint>

#include "evk/error.hpp"
#include "evk/gi/search.hpp"
#include "fuzz_util.hpp"
#include "gi_grammars.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& k = evk::fuzz::Kernels::get();
  const auto text = evk::fuzz::view(data, size);
  evk::fuzz::put("checkpoint.json", text);
  evk::fuzz::put("generations.jsonl", text);
  const std::string dir = evk::fuzz::scratch().string();
  try {
    const evk::gi::SearchState s = evk::gi::load_checkpoint(dir, k.grammars[size % k.grammars.size()]);
    for (const auto& ind : s.population)
      if (ind.text.size() > size + 1) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  try {
    evk::gi::read_generation_log(dir);
  } catch (const evk::InputError&) {
  }
  return 0;
}

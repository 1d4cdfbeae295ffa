// The GI run directory as `gi run --resume` and `gi report` read it: config.json (read_run_config),
// checkpoint.json (population genomes parsed against a tool's grammar, tabu hashes, RNG state,
// history), generations.jsonl alone and checked against the checkpoint (read_run_log).
// Every file gets the input. A damaged run directory must end in InputError.
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
  evk::fuzz::put("config.json", text);
  const std::string dir = evk::fuzz::scratch().string();
  const std::size_t tool = size % k.grammars.size();
  try {
    const evk::gi::SearchState s = evk::gi::load_checkpoint(dir, k.grammars[tool]);
    for (const auto& ind : s.population)
      if (ind.text.size() > size + 1) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  try {
    evk::gi::read_run_log(dir);
  } catch (const evk::InputError&) {
  }
  try {
    const evk::gi::RunConfig c = evk::gi::read_run_config(dir, *k.problems[tool], 7);
    if (c.population < 2 || c.generations < 1 || c.repeats < 1 || !(c.tolerance >= 0 && c.tolerance <= 10)) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  return 0;
}

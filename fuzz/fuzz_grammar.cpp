// The GI grammar and scope reader on arbitrary kernel text: annotations (//@gi begin/end/fixed),
// the entry's signature, rules, scopes, the BNF printer, then a few random edits applied and the
// result preprocessed (phenotype tier 1). Broken annotations must end in InputError.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"
#include "fuzz_util.hpp"

namespace gi = evk::gi;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string src(evk::fuzz::view(data, size));
  static const std::vector<gi::ConfigParam> params = {
      {"BLOCK_W", gi::ConfigParam::Kind::number, {"32", "64", "128"}, "64", "threads"},
      {"USE_X", gi::ConfigParam::Kind::boolean, {"false", "true"}, "false", "a switch"}};
  try {
    gi::Grammar g = gi::make_grammar(src, "k", params);
    (void)gi::print_bnf(g);
    gi::Rng rng(size);
    gi::Genome x = gi::empty_genome(g);
    for (int i = 0; i < 3; ++i) x = gi::mutate(g, x, rng);
    const gi::Genome back = gi::parse_genome(g, gi::format_genome(g, x));
    if (!(back == x)) __builtin_trap();
    const gi::Variant v = gi::apply(g, x);
    (void)gi::preprocess(v.source, {{"BLOCK_W", "64"}});
  } catch (const evk::InputError&) {
  }
  return 0;
}

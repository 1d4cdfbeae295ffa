// A GI individual: the fixed part (a value for every config parameter) and an ordered list of edits
// in the papers' notation. Text form (one line, canonical): non-default config values first, then
// the edits, separated by spaces:
//   BLOCK_W=128 <_K_126> <_K_288><_K_232> <_K_288>+<_K_293> <IF_K_245><IF_K_167> <pragma_K_31><pragma_K4>
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "evk/gi/grammar.hpp"
#include "evk/gi/option_genes.hpp"
#include "evk/gi/problem.hpp"

namespace evk::gi {

struct Edit {
  enum class Op { del, replace, insert };
  Op op = Op::del;
  std::string target;  // rule name without brackets, e.g. "_K_126"
  std::string source;  // replace/insert: a rule of the same type, or a choice ("pragma_K4", "restrict_on")
  std::string text() const;
  bool operator==(const Edit& o) const { return op == o.op && target == o.target && source == o.source; }
};

struct Genome {
  Config config;            // every parameter (defaults filled in)
  std::vector<Edit> edits;  // applied left to right
  Config options;           // every NVRTC option gene (Grammar::option_params, defaults filled in)
  bool operator==(const Genome& o) const { return config == o.config && edits == o.edits && options == o.options; }
};

Genome empty_genome(const Grammar& g);  // default config, no edits
bool is_empty(const Grammar& g, const Genome& x);
std::string format_genome(const Grammar& g, const Genome& x);
// Throws InputError ("<what>: ...") for unknown rules/parameters/values or edits that break the
// grammar's type and scope rules.
Genome parse_genome(const Grammar& g, const std::string& text, const std::string& what = "genome");
std::uint64_t genome_hash(const Grammar& g, const Genome& x);

struct Variant {
  std::string source;
  Config config;
  std::vector<std::string> options;  // NVRTC options from the genome's option genes, to append to the
                                     // problem's compile_options(config)
};
struct ApplyOptions {
  // true: the source as the search compiles it (`gi apply --as-searched`): the engine's prelude
  // (loop-guard deadline, per-SM tick scope, the evk_gi_stamp kernel) in front.
  // false: the source a person reads and the tools run (`gi apply`): the original plus the edits and
  // only the loop guards those edits need; its kernel compiles to the same code as the searched one
  // (the prelude is dead code there unless -DEVK_GI_TICKS/-DEVK_GI_DEADLINE).
  bool engine = true;
};
// The patched kernel: edits applied to the grammar, loop guards added, fixed part as config.
Variant apply(const Grammar& g, const Genome& x, const ApplyOptions& o = {});
// For the apps: the genome text applied to the problem's kernel as a person reads it
// (ApplyOptions::engine = false). An empty genome gives the original source unchanged and the
// default config.
Variant apply_genome(const Problem& p, const std::string& genome_text);

// Operators (operators.cpp). Rng is the search's generator; every random choice goes through it.
using Rng = std::mt19937_64;
Edit random_edit(const Grammar& g, const Genome& current, Rng& rng);
void mutate_config(const Grammar& g, Config& c, Rng& rng);  // one parameter, the papers' rules
// Half config change, half appended code edit (code only when there are no parameters).
Genome mutate(const Grammar& g, const Genome& parent, Rng& rng);
// Uniform crossover on the config, two-point on the edits, duplicate edits removed.
Genome crossover(const Genome& a, const Genome& b, Rng& rng);
// True when the edit respects types and scopes (what parse_genome enforces).
bool edit_valid(const Grammar& g, const Edit& e, std::string* why = nullptr);

}  // namespace evk::gi

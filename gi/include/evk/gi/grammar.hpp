// The papers' line grammar, derived automatically from an annotated kernel source (see
// docs/ARCHITECTURE.md, "Kernel sources"): every line is a rule; lines inside `//@gi begin` ..
// `//@gi end` that are plain statements, if conditions or for-header parts are variable; specials
// (#pragma unroll before each loop, __restrict__, __launch_bounds__, volatile shared, const scalar
// arguments) are added; config parameters (the fixed part) come from the Problem.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "evk/gi/problem.hpp"

namespace evk::gi {

enum class RuleType { line, if_cond, for1, for2, for3, pragma, restrict_args, launch_bounds, volatile_shared, const_arg };
const char* rule_type_name(RuleType t);

// One variable rule. `name` is the papers' notation without brackets: "_K_126", "IF_K_245",
// "for2_K_31", "pragma_K_31", "restrict_K_12", "launchbounds_K_12", "volatile_K", "const_K_12_n".
struct Rule {
  std::string name;
  RuleType type = RuleType::line;
  int line = 0;             // 1-based source line it belongs to
  std::string text;         // the rule's original text: statement, condition, for part, arg name
  std::vector<int> targets; // rules (indices) of the same type this rule's text may be copied to
};

// One line of the source as the grammar sees it.
struct Line {
  std::string text;          // original text without the newline
  bool evolvable = false;    // inside //@gi begin..end and not //@gi fixed
  int rule = -1;             // plain line / if rule index
  int for_rules[3] = {-1, -1, -1};
  int pragma_rule = -1;      // for-header lines: the #pragma unroll rule
  std::string indent;
  std::string prefix, suffix; // if/for lines: text before/after the replaced condition
  std::string for_parts[3];
};

struct GrammarOptions {
  std::string launch_threads = "1024";  // first __launch_bounds__ argument (e.g. "BLOCK_W")
  int loop_limit = 1 << 16;              // loop guard: iterations per loop entry per thread
};

struct Grammar {
  std::string entry;
  std::vector<Line> lines;            // lines[i] is source line i+1
  std::vector<Rule> rules;            // variable rules
  std::map<std::string, int> by_name; // rule name -> index
  std::vector<ConfigParam> params;    // the fixed part
  std::vector<ConfigParam> option_params;  // NVRTC option genes (nvrtc_option_params())
  GrammarOptions options;
  int signature_begin = -1, signature_end = -1;  // 0-based line range of the entry's parameter list
  bool restrict_default = false;                 // all array args already __restrict__
  std::vector<std::string> array_args, scalar_args;
  int shared_lines = 0;

  int find(const std::string& name) const;  // -1 if absent
  std::vector<int> rules_of(RuleType t) const;
  // sources[r] = rules whose text may be copied onto rule r (inverse of targets)
  std::vector<std::vector<int>> sources;
};

// Builds the grammar. Throws InputError (naming `what`) when the annotations are missing or broken.
Grammar make_grammar(const std::string& source, const std::string& entry, const std::vector<ConfigParam>& params,
                     const GrammarOptions& opt = {}, const std::string& what = "kernel");
Grammar make_grammar(const Problem& p);

// The papers' BNF notation, one rule per line, with a count per rule type in a header.
std::string print_bnf(const Grammar& g, const std::string& file_tag = "kernel.cu");
std::map<std::string, int> rule_counts(const Grammar& g);  // type name -> count ("fixed" included)

// Scoping (scope.cpp): fills Rule::targets and Grammar::sources from declarations and braces.
void compute_scopes(Grammar& g);

// Phenotype tier 1 (phenotype.cpp): the source after conditional compilation with the given macro
// definitions and object-like macro expansion, comments and blank lines dropped, whitespace squeezed.
std::string preprocess(const std::string& source, const std::map<std::string, std::string>& defines);
// -DNAME=value / -DNAME options -> defines; other options are returned in `rest`.
std::map<std::string, std::string> defines_of(const std::vector<std::string>& options, std::vector<std::string>* rest);

}  // namespace evk::gi

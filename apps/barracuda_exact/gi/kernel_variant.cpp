#include "gi/kernel_variant.hpp"

#include "gi/aln_gi_problem.hpp"
#include "gi/gi_problem.hpp"
#include "core/kernel_config.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"

namespace evk::barracuda_exact {

namespace {
// "original code, default config" / "3 code edits, BLOCK_W=128 ..." for either kernel, the changed
// parameters in the problem's order.
std::string describe_variant(int edits, const gi::Config& config, const gi::Problem& problem) {
  std::string s = edits == 0 ? "original code" : std::to_string(edits) + " code edit" + (edits == 1 ? "" : "s");
  std::string cfg;
  for (const auto& p : problem.config_params())
    if (config.at(p.name) != p.default_value) cfg += (cfg.empty() ? "" : " ") + p.name + "=" + config.at(p.name);
  return s + ", " + (cfg.empty() ? "default config" : cfg);
}

// A genome of `problem`'s grammar resolved: its configuration checked by `validate` (InputError
// naming the file), its edit count and the source `gi run` compiled for it (loop guards included).
// The original (or an empty genome): `validate({})`, no edits, no source.
template <class Validate>
void resolve_variant(const gi::Problem& problem, const Variant& v, Validate validate, gi::Config& config, int& edits,
                     std::string& source) {
  config = validate(gi::Config{});
  if (v.is_original() || v.genome.find_first_not_of(" \t\r\n") == std::string::npos) return;
  const std::string where = v.path.empty() ? "kernel variant " + v.id : v.path;
  const gi::Grammar g = gi::make_grammar(problem);
  const gi::Genome x = gi::parse_genome(g, v.genome, where);  // InputError "<where>: ..."
  try {
    config = validate(x.config);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  edits = static_cast<int>(x.edits.size());
  source = gi::apply(g, x).source;
}
}  // namespace

std::string KernelVariant::describe() const { return describe_variant(edits, config, *make_gi_problem()); }

KernelVariant resolve_kernel_variant(const Variant& v) {
  KernelVariant k;
  resolve_variant(*make_gi_problem(), v, [](const gi::Config& c) { return c.empty() ? default_kernel_config() : validate_kernel_config(c); },
                  k.config, k.edits, k.source);
  return k;
}

std::string InexactVariant::describe() const { return describe_variant(edits, config, *make_inexact_gi_problem()); }

InexactVariant resolve_inexact_variant(const Variant& v) {
  InexactVariant k;
  resolve_variant(*make_inexact_gi_problem(), v, validate_inexact_config, k.config, k.edits, k.source);
  return k;
}

Registry make_registry() {
  Registry reg;
  reg.add_kernel("barracuda_exact");
  reg.add_kernel("barracuda_inexact");
  reg.add_builtin();
  add_installed_variants(reg);  // an installed share/evokernels/evolved (ids built in are skipped)
  return reg;
}

// The GI problem's classes (gi_problem.cpp class_of): an occurrence table of a reference beyond
// ~50 Mbp (~50 MB) no longer fits in L2.
std::string size_class_of(long long ref_length) { return ref_length > 50000000 ? "large" : "ecoli"; }

Request make_request(long long ref_length, int read_length) {
  Request r;
  r.size_class = size_class_of(ref_length);
  r.props["ref_length"] = static_cast<double>(ref_length);
  if (read_length > 0) r.props["read_length"] = read_length;
  return r;
}

Request make_inexact_request(int seed_len, long long ref_length) {
  Request r;
  r.size_class = inexact_size_class(seed_len);
  r.props["seed_len"] = seed_len;
  r.props["ref_length"] = static_cast<double>(ref_length);
  return r;
}

}  // namespace evk::barracuda_exact

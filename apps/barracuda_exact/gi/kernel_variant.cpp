#include "gi/kernel_variant.hpp"

#include "gi/aln_gi_problem.hpp"
#include "gi/gi_problem.hpp"
#include "core/kernel_config.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/grammar.hpp"

namespace evk::barracuda_exact {

std::string KernelVariant::describe() const {
  std::string s = edits == 0 ? "original code" : std::to_string(edits) + " code edit" + (edits == 1 ? "" : "s");
  std::string cfg;
  const gi::Config d = default_kernel_config();
  for (const auto& p : kernel_params())
    if (config.at(p.name) != d.at(p.name)) cfg += (cfg.empty() ? "" : " ") + p.name + "=" + config.at(p.name);
  return s + ", " + (cfg.empty() ? "default config" : cfg);
}

KernelVariant resolve_kernel_variant(const Variant& v) {
  KernelVariant k;
  k.config = default_kernel_config();
  if (v.is_original() || v.genome.find_first_not_of(" \t\r\n") == std::string::npos) return k;
  const std::string where = v.path.empty() ? "kernel variant " + v.id : v.path;
  const auto problem = make_gi_problem();
  const gi::Grammar g = gi::make_grammar(*problem);
  const gi::Genome x = gi::parse_genome(g, v.genome, where);  // InputError "<where>: ..."
  try {
    k.config = validate_kernel_config(x.config);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  k.edits = static_cast<int>(x.edits.size());
  k.source = gi::apply(g, x).source;  // exactly what `gi run` compiled for this genome (loop guards included)
  return k;
}

std::string InexactVariant::describe() const {
  std::string s = edits == 0 ? "original code" : std::to_string(edits) + " code edit" + (edits == 1 ? "" : "s");
  std::string cfg;
  const gi::Config d = validate_inexact_config({});
  for (const auto& [k, v] : config)
    if (d.at(k) != v) cfg += (cfg.empty() ? "" : " ") + k + "=" + v;
  return s + ", " + (cfg.empty() ? "default config" : cfg);
}

InexactVariant resolve_inexact_variant(const Variant& v) {
  InexactVariant k;
  k.config = validate_inexact_config({});
  if (v.is_original() || v.genome.find_first_not_of(" \t\r\n") == std::string::npos) return k;
  const std::string where = v.path.empty() ? "kernel variant " + v.id : v.path;
  const auto problem = make_inexact_gi_problem();
  const gi::Grammar g = gi::make_grammar(*problem);
  const gi::Genome x = gi::parse_genome(g, v.genome, where);  // InputError "<where>: ..."
  try {
    k.config = validate_inexact_config(x.config);
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  k.edits = static_cast<int>(x.edits.size());
  k.source = gi::apply(g, x).source;  // what `gi-inexact run` compiled for this genome
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

#include "core/kernel_coverage.hpp"

#include <algorithm>
#include <bitset>
#include <map>

#include "core/kernel_config.hpp"

namespace evk::barracuda_exact {
namespace {

using Pairs = std::bitset<kValuePairCount>;

// Offsets of each parameter's values in one flat list (BLOCK_W, parameter 0, excluded).
struct Flat {
  std::vector<gi::ConfigParam> params = kernel_params();
  std::vector<int> offset;
  Flat() {
    int o = 0;
    for (const auto& p : params) {
      offset.push_back(o);
      if (&p != &params[0]) o += static_cast<int>(p.values.size());
    }
  }
  int value_of(const gi::Config& c, std::size_t k) const {
    const auto& v = params[k].values;
    return static_cast<int>(std::find(v.begin(), v.end(), c.at(params[k].name)) - v.begin());
  }
};

const Flat& flat() {
  static const Flat f;
  return f;
}

Pairs pairs_of(const gi::Config& c) {
  const Flat& f = flat();
  Pairs p;
  for (std::size_t a = 1; a < f.params.size(); ++a)
    for (std::size_t b = a + 1; b < f.params.size(); ++b)
      p.set(static_cast<std::size_t>(value_pair_index(static_cast<int>(a), f.value_of(c, a), static_cast<int>(b), f.value_of(c, b))));
  return p;
}

}  // namespace

int value_pair_index(int a, int va, int b, int vb) {
  if (a == b) return -1;
  if (a > b) {
    std::swap(a, b);
    std::swap(va, vb);
  }
  const Flat& f = flat();
  return (f.offset[static_cast<std::size_t>(a)] + va) * 33 + f.offset[static_cast<std::size_t>(b)] + vb;
}

CoveragePlan plan_coverage(const KernelSpace& s, const std::string& full_block_w) {
  // pairs covered by each program (over its members), grouped by BLOCK_W in order of appearance
  std::vector<Pairs> covers(s.programs.size());
  for (std::size_t i = 0; i < s.legal_program.size(); ++i)
    covers[s.legal_program[i]] |= pairs_of(kernel_combination(s.legal_combination[i]));
  std::vector<std::string> widths;
  std::map<std::string, std::vector<std::size_t>> by_width;
  for (std::size_t p = 0; p < s.programs.size(); ++p) {
    const std::string& w = s.programs[p].config.at("BLOCK_W");
    if (!by_width.count(w)) widths.push_back(w);
    by_width[w].push_back(p);
  }
  CoveragePlan plan;
  std::vector<char> chosen(s.programs.size(), 0);
  for (const auto& w : widths) {
    const auto& progs = by_width[w];
    if (w == full_block_w) {
      for (std::size_t p : progs) plan.full.push_back(p), chosen[p] = 1;
      continue;
    }
    Pairs need;
    for (std::size_t p : progs) need |= covers[p];
    Pairs have;
    while (have != need) {  // greedy: most new pairs, ties to the first program
      std::size_t best = progs.front(), gain = 0;
      for (std::size_t p : progs) {
        const std::size_t g = (covers[p] & ~have).count();
        if (g > gain) best = p, gain = g;
      }
      have |= covers[best];
      plan.pairwise.push_back(best);
      chosen[best] = 1;
    }
  }
  for (std::size_t p = 0; p < s.programs.size(); ++p)
    if (!chosen[p]) plan.rest.push_back(p);
  return plan;
}

}  // namespace evk::barracuda_exact

// Mutation and crossover (GECCO 2014 / 2015): append one random code edit or change one config
// value; uniform crossover on the fixed part, two-point on the edit list.
#include <algorithm>

#include "evk/gi/genome.hpp"

namespace evk::gi {

namespace {
template <class T>
const T& pick(const std::vector<T>& v, Rng& rng) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}
int uniform(int lo, int hi, Rng& rng) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// Current on/off of a boolean special after the genome's edits.
bool state_of(const Genome& x, const std::string& target, const std::string& on, bool dflt) {
  bool s = dflt;
  for (const auto& e : x.edits)
    if (e.target == target) s = e.source == on;
  return s;
}
}  // namespace

Edit random_edit(const Grammar& g, const Genome& current, Rng& rng) {
  for (int attempt = 0; attempt < 64 && !g.rules.empty(); ++attempt) {
    int t = uniform(0, static_cast<int>(g.rules.size()) - 1, rng);
    const Rule& r = g.rules[t];
    Edit e;
    e.target = r.name;
    std::vector<int> src;
    for (int s : g.sources[t])
      if (s != t && g.rules[s].text != r.text) src.push_back(s);
    switch (r.type) {
      case RuleType::line: {
        int op = uniform(0, 2, rng);
        if (op == 0 || src.empty()) {
          e.op = Edit::Op::del;
        } else {
          e.op = op == 1 ? Edit::Op::replace : Edit::Op::insert;
          e.source = g.rules[pick(src, rng)].name;
        }
        return e;
      }
      case RuleType::if_cond:
        if (src.empty() || uniform(0, 1, rng) == 0) {
          e.op = Edit::Op::del;
        } else {
          e.op = Edit::Op::replace;
          e.source = g.rules[pick(src, rng)].name;
        }
        return e;
      case RuleType::for1:
      case RuleType::for2:
      case RuleType::for3:
        if (src.empty()) continue;
        e.op = Edit::Op::replace;
        e.source = g.rules[pick(src, rng)].name;
        return e;
      case RuleType::pragma: {
        int c = uniform(-1, 11, rng);
        if (c < 0) e.op = Edit::Op::del;
        else {
          e.op = Edit::Op::replace;
          e.source = "pragma_K" + std::to_string(c);
        }
        return e;
      }
      case RuleType::launch_bounds: {
        int c = uniform(-1, 5, rng);
        if (c < 0) e.op = Edit::Op::del;
        else {
          e.op = Edit::Op::replace;
          e.source = "launchbounds_K" + std::to_string(c);
        }
        return e;
      }
      case RuleType::restrict_args:
        e.op = Edit::Op::replace;
        e.source = state_of(current, r.name, "restrict_on", g.restrict_default) ? "restrict_off" : "restrict_on";
        return e;
      case RuleType::volatile_shared:
        e.op = Edit::Op::replace;
        e.source = state_of(current, r.name, "volatile_on", false) ? "volatile_off" : "volatile_on";
        return e;
      case RuleType::const_arg:
        e.op = Edit::Op::replace;
        e.source = state_of(current, r.name, "const_on", false) ? "const_off" : "const_on";
        return e;
    }
  }
  return {};
}

void mutate_config(const Grammar& g, Config& c, Rng& rng) {
  std::vector<const ConfigParam*> ps;
  for (const auto& p : g.params)
    if (p.values.size() > 1) ps.push_back(&p);
  if (ps.empty()) return;
  const ConfigParam& p = *pick(ps, rng);
  std::string& v = c[p.name];
  if (uniform(0, 4, rng) == 0 && v != p.default_value) {  // one in five: back to the default
    v = p.default_value;
    return;
  }
  int cur = -1;
  for (std::size_t k = 0; k < p.values.size(); ++k)
    if (p.values[k] == v) cur = static_cast<int>(k);
  int n = static_cast<int>(p.values.size());
  if (p.kind == ConfigParam::Kind::boolean || n == 2) {
    v = p.values[cur == 0 ? 1 : 0];
    return;
  }
  if (cur < 0 || uniform(0, 1, rng) == 0) {  // big jump
    int k = uniform(0, n - 2, rng);
    if (k >= cur && cur >= 0) ++k;
    v = p.values[k];
  } else {  // neighbour move
    int k = cur == 0 ? 1 : cur == n - 1 ? n - 2 : cur + (uniform(0, 1, rng) ? 1 : -1);
    v = p.values[k];
  }
}

Genome mutate(const Grammar& g, const Genome& parent, Rng& rng) {
  Genome child = parent;
  bool has_params = false;
  for (const auto& p : g.params) has_params |= p.values.size() > 1;
  if (has_params && (g.rules.empty() || uniform(0, 1, rng) == 0)) {
    mutate_config(g, child.config, rng);
  } else {
    Edit e = random_edit(g, parent, rng);
    if (!e.target.empty()) child.edits.push_back(e);
  }
  return child;
}

Genome crossover(const Genome& a, const Genome& b, Rng& rng) {
  Genome child;
  for (const auto& [k, v] : a.config) {
    auto it = b.config.find(k);
    child.config[k] = (it != b.config.end() && uniform(0, 1, rng)) ? it->second : v;
  }
  child.options = a.options;  // option genes: uniform too, drawing only when the parents differ
  if (a.options != b.options)
    for (auto& [k, v] : child.options) {
      auto it = b.options.find(k);
      if (it != b.options.end() && uniform(0, 1, rng)) v = it->second;
    }
  auto cuts = [&](std::size_t n) {
    int x = uniform(0, static_cast<int>(n), rng), y = uniform(0, static_cast<int>(n), rng);
    return std::make_pair(std::min(x, y), std::max(x, y));
  };
  auto [a1, a2] = cuts(a.edits.size());
  auto [b1, b2] = cuts(b.edits.size());
  std::vector<Edit> e(a.edits.begin(), a.edits.begin() + a1);
  e.insert(e.end(), b.edits.begin() + b1, b.edits.begin() + b2);
  e.insert(e.end(), a.edits.begin() + a2, a.edits.end());
  for (const auto& x : e)
    if (std::find(child.edits.begin(), child.edits.end(), x) == child.edits.end()) child.edits.push_back(x);
  return child;
}

}  // namespace evk::gi

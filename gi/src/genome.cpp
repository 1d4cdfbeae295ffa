#include "evk/gi/genome.hpp"

#include <sstream>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "text.hpp"

namespace evk::gi {

std::string Edit::text() const {
  switch (op) {
    case Op::del: return "<" + target + ">";
    case Op::replace: return "<" + target + "><" + source + ">";
    case Op::insert: return "<" + target + ">+<" + source + ">";
  }
  return "";
}

Genome empty_genome(const Grammar& g) {
  Genome x;
  for (const auto& p : g.params) x.config[p.name] = p.default_value;
  for (const auto& p : g.option_params) x.options[p.name] = p.default_value;
  return x;
}

bool is_empty(const Grammar& g, const Genome& x) {
  Genome e = empty_genome(g);
  return x.edits.empty() && x.config == e.config && x.options == e.options;
}

std::string format_genome(const Grammar& g, const Genome& x) {
  std::string out;
  auto add = [&](const std::string& t) {
    if (!out.empty()) out += ' ';
    out += t;
  };
  for (const auto& p : g.params) {
    auto it = x.config.find(p.name);
    if (it != x.config.end() && it->second != p.default_value) add(p.name + "=" + it->second);
  }
  for (const auto& p : g.option_params) {
    auto it = x.options.find(p.name);
    if (it != x.options.end() && it->second != p.default_value) add(p.name + "=" + it->second);
  }
  for (const auto& e : x.edits) add(e.text());
  return out;
}

std::uint64_t genome_hash(const Grammar& g, const Genome& x) {
  std::string t = format_genome(g, x);
  return fnv1a64(t.data(), t.size());
}

namespace {
bool choice_ok(RuleType t, const std::string& c) {
  switch (t) {
    case RuleType::pragma:
      for (int k = 0; k <= 11; ++k)
        if (c == "pragma_K" + std::to_string(k)) return true;
      return false;
    case RuleType::launch_bounds:
      for (int k = 0; k <= 5; ++k)
        if (c == "launchbounds_K" + std::to_string(k)) return true;
      return false;
    case RuleType::restrict_args: return c == "restrict_on" || c == "restrict_off";
    case RuleType::volatile_shared: return c == "volatile_on" || c == "volatile_off";
    case RuleType::const_arg: return c == "const_on" || c == "const_off";
    default: return false;
  }
}
}  // namespace

bool edit_valid(const Grammar& g, const Edit& e, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  int t = g.find(e.target);
  if (t < 0) return fail("unknown rule <" + e.target + ">");
  const Rule& tr = g.rules[t];
  bool code = tr.type == RuleType::line || tr.type == RuleType::if_cond || tr.type == RuleType::for1 ||
              tr.type == RuleType::for2 || tr.type == RuleType::for3;
  if (e.op == Edit::Op::del) {
    if (tr.type == RuleType::line || tr.type == RuleType::if_cond || tr.type == RuleType::pragma ||
        tr.type == RuleType::launch_bounds)
      return true;
    return fail("<" + e.target + "> cannot be deleted");
  }
  if (!code) {
    if (e.op != Edit::Op::replace || !choice_ok(tr.type, e.source))
      return fail("<" + e.source + "> is not a choice for <" + e.target + ">");
    return true;
  }
  int s = g.find(e.source);
  if (s < 0) return fail("unknown rule <" + e.source + ">");
  const Rule& sr = g.rules[s];
  if (sr.type != tr.type) return fail("<" + e.source + "> and <" + e.target + "> are of different types");
  if (e.op == Edit::Op::insert && tr.type != RuleType::line) return fail("only plain lines can be inserted");
  bool in_scope = false;
  for (int x : sr.targets) in_scope |= x == t;
  if (!in_scope) return fail("<" + e.source + "> would leave its variables' scope at <" + e.target + ">");
  return true;
}

// The genome text without '#' header/comment lines (docs/FORMATS.md).
static std::string genome_body(const std::string& txt) {
  std::string body, line;
  for (std::size_t i = 0; i <= txt.size(); ++i) {
    if (i == txt.size() || txt[i] == '\n') {
      if (!text::starts_with(text::trim(line), "#")) body += line + "\n";
      line.clear();
    } else {
      line += txt[i];
    }
  }
  return body;
}

// "# genes: N" (genome_file() writes it): the text must hold N genes (a cut file is not read as a
// shorter genome). -1 when absent.
static long long genes_header(const std::string& txt, const std::string& what) {
  std::istringstream in(txt);
  for (std::string line; std::getline(in, line);) {
    const std::string t = text::trim(line);
    if (!text::starts_with(t, "#")) continue;
    const std::string body = text::trim(t.substr(1));
    if (!text::starts_with(body, "genes:")) continue;
    const std::string v = text::trim(body.substr(6));
    try {
      std::size_t used = 0;
      const long long n = std::stoll(v, &used);
      if (used == v.size() && n >= 0) return n;
    } catch (const std::exception&) {
    }
    input_error(what, "bad '# genes:' header '" + v + "'");
  }
  return -1;
}

Genome parse_genome(const Grammar& g, const std::string& txt, const std::string& what) {
  Genome x = empty_genome(g);
  const auto tokens = text::split_ws(genome_body(txt));
  if (const long long n = genes_header(txt, what); n >= 0 && n != static_cast<long long>(tokens.size()))
    input_error(what, "truncated or edited: " + std::to_string(tokens.size()) + " genes, the '# genes:' header says " +
                          std::to_string(n));
  for (const auto& tok : tokens) {
    if (tok[0] != '<') {
      auto eq = tok.find('=');
      if (eq == std::string::npos) input_error(what, "'" + tok + "' is neither NAME=value nor a <rule> gene");
      std::string name = tok.substr(0, eq), value = tok.substr(eq + 1);
      const ConfigParam* p = nullptr;
      bool option = false;
      for (const auto& q : g.params)
        if (q.name == name) p = &q;
      for (const auto& q : g.option_params)
        if (q.name == name) p = &q, option = true;
      if (!p) input_error(what, "unknown config parameter " + name);
      bool legal = p->values.empty();
      for (const auto& v : p->values) legal |= v == value;
      if (!legal) input_error(what, "illegal value " + name + "=" + value);
      (option ? x.options : x.config)[name] = value;
      continue;
    }
    Edit e;
    auto close = tok.find('>');
    if (close == std::string::npos) input_error(what, "unterminated gene '" + tok + "'");
    e.target = tok.substr(1, close - 1);
    std::string rest = tok.substr(close + 1);
    if (rest.empty()) {
      e.op = Edit::Op::del;
    } else {
      if (rest[0] == '+') {
        e.op = Edit::Op::insert;
        rest = rest.substr(1);
      } else {
        e.op = Edit::Op::replace;
      }
      if (rest.size() < 3 || rest.front() != '<' || rest.back() != '>' || rest.find('>') != rest.size() - 1)
        input_error(what, "malformed gene '" + tok + "'");
      e.source = rest.substr(1, rest.size() - 2);
    }
    std::string why;
    if (!edit_valid(g, e, &why)) input_error(what, "gene " + tok + ": " + why);
    x.edits.push_back(e);
  }
  return x;
}

Variant apply_genome(const Problem& p, const std::string& genome_text) {
  if (text::trim(genome_body(genome_text)).empty() && genes_header(genome_text, "genome") <= 0)
    return {p.kernel_source(), p.default_config()};
  Grammar g = make_grammar(p);
  ApplyOptions o;
  o.engine = false;
  return apply(g, parse_genome(g, genome_text), o);
}

}  // namespace evk::gi

#include "evk/gi/grammar.hpp"
#include "evk/gi/option_genes.hpp"

#include <sstream>

#include "evk/error.hpp"
#include "text.hpp"

namespace evk::gi {

const char* rule_type_name(RuleType t) {
  switch (t) {
    case RuleType::line: return "line";
    case RuleType::if_cond: return "IF";
    case RuleType::for1: return "for1";
    case RuleType::for2: return "for2";
    case RuleType::for3: return "for3";
    case RuleType::pragma: return "pragma";
    case RuleType::restrict_args: return "restrict";
    case RuleType::launch_bounds: return "launchbounds";
    case RuleType::volatile_shared: return "volatile";
    case RuleType::const_arg: return "const";
  }
  return "?";
}

int Grammar::find(const std::string& name) const {
  auto it = by_name.find(name);
  return it == by_name.end() ? -1 : it->second;
}

std::vector<int> Grammar::rules_of(RuleType t) const {
  std::vector<int> v;
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (rules[i].type == t) v.push_back(static_cast<int>(i));
  return v;
}

namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

int add_rule(Grammar& g, RuleType t, const std::string& name, int line, const std::string& text) {
  Rule r;
  r.name = name;
  r.type = t;
  r.line = line;
  r.text = text;
  g.rules.push_back(r);
  int idx = static_cast<int>(g.rules.size()) - 1;
  g.by_name[name] = idx;
  return idx;
}

// regex ^(\}\s*)?(return|break|continue|goto|else|do|while|switch|case|default)\b
bool control_statement(const std::string& code) {
  static const std::vector<std::string> kw = {"return", "break", "continue", "goto", "else",
                                              "do",     "while", "switch",   "case", "default"};
  return text::starts_keyword(code, kw, false);
}

bool braces_only(const std::string& code) {
  for (char c : code)
    if (c != '{' && c != '}' && c != ';' && c != ' ' && c != '\t') return false;
  return true;
}

// The entry's parameter list: finds `entry (` after __global__, returns [begin,end] line range.
void parse_signature(Grammar& g, const std::string& what) {
  for (std::size_t i = 0; i < g.lines.size(); ++i) {
    const std::string& l = g.lines[i].text;
    // the entry's name (a call-like `entry (`) after __global__ on the same line
    const std::size_t global = l.find("__global__");
    const std::size_t at = text::find_call(l, g.entry, global);
    if (at == std::string::npos) continue;
    std::string joined;
    std::size_t j = i;
    for (; j < g.lines.size(); ++j) {
      joined += g.lines[j].text + "\n";
      auto open = joined.find('(', at);
      if (open != std::string::npos && text::match_paren(joined, open) != std::string::npos) break;
    }
    if (j >= g.lines.size()) input_error(what, "unterminated parameter list of " + g.entry);
    g.signature_begin = static_cast<int>(i);
    g.signature_end = static_cast<int>(j);
    auto open = joined.find('(', at);
    auto close = text::match_paren(joined, open);
    bool all_restrict = true;
    for (const auto& arg : text::split_top(joined.substr(open + 1, close - open - 1), ',')) {
      bool dummy = false;
      std::string code = text::trim(text::code_part(arg, dummy));
      if (code.empty() || code == "void") continue;
      auto ids = text::identifiers(code);
      if (ids.empty()) continue;
      std::string name = ids.back();
      if (code.find('*') != std::string::npos || code.find('[') != std::string::npos) {
        g.array_args.push_back(name);
        if (code.find("__restrict__") == std::string::npos) all_restrict = false;
      } else if (!text::has_word(code, "const") && code.find('&') == std::string::npos) {
        g.scalar_args.push_back(name);
      }
    }
    g.restrict_default = all_restrict && !g.array_args.empty();
    return;
  }
  input_error(what, "no __global__ function named " + g.entry);
}

// A scalar argument the body assigns to cannot be made const.
bool assigned_in(const Grammar& g, const std::string& name) {
  bool blk = false;
  for (int i = g.signature_end + 1; i < static_cast<int>(g.lines.size()); ++i) {
    std::string code = text::code_part(g.lines[i].text, blk);
    if (text::assigns(code, name)) return true;
  }
  return false;
}

}  // namespace

Grammar make_grammar(const std::string& source, const std::string& entry, const std::vector<ConfigParam>& params,
                     const GrammarOptions& opt, const std::string& what) {
  Grammar g;
  g.entry = entry;
  g.params = params;
  g.option_params = nvrtc_option_params();
  g.options = opt;
  auto raw = split_lines(source);
  int begin = -1, end = -1;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    std::string t = text::trim(raw[i]);
    if (t == "//@gi begin") {
      if (begin >= 0) input_error(what, "line " + std::to_string(i + 1) + ": second //@gi begin");
      begin = static_cast<int>(i);
    } else if (t == "//@gi end") {
      if (begin < 0) input_error(what, "line " + std::to_string(i + 1) + ": //@gi end before //@gi begin");
      end = static_cast<int>(i);
    }
  }
  if (begin < 0 || end < 0) input_error(what, "no //@gi begin ... //@gi end region");
  for (const auto& l : raw) {
    Line line;
    line.text = l;
    line.indent = text::leading_ws(l);
    g.lines.push_back(line);
  }
  parse_signature(g, what);

  bool in_block = false;
  for (int i = begin + 1; i < end; ++i) {
    Line& L = g.lines[i];
    std::string code = text::trim(text::code_part(L.text, in_block));
    if (L.text.find("//@gi fixed") != std::string::npos) continue;
    if (i >= g.signature_begin && i <= g.signature_end) continue;
    if (code.empty() || code[0] == '#' || braces_only(code)) continue;
    int n = i + 1;
    std::string num = std::to_string(n);
    if (text::starts_for(code)) {
      std::size_t open = L.text.find('(', L.text.find("for"));
      std::size_t close = text::match_paren(L.text, open);
      if (close == std::string::npos) continue;
      auto parts = text::split_top(L.text.substr(open + 1, close - open - 1), ';');
      if (parts.size() != 3) continue;
      L.evolvable = true;
      L.prefix = L.text.substr(0, open + 1);
      L.suffix = L.text.substr(close);
      for (int k = 0; k < 3; ++k) L.for_parts[k] = text::trim(parts[k]);
      if (!L.for_parts[0].empty() && text::declared_names(L.for_parts[0] + ";").empty())
        L.for_rules[0] = add_rule(g, RuleType::for1, "for1_K_" + num, n, L.for_parts[0]);
      if (!L.for_parts[1].empty()) L.for_rules[1] = add_rule(g, RuleType::for2, "for2_K_" + num, n, L.for_parts[1]);
      if (!L.for_parts[2].empty()) L.for_rules[2] = add_rule(g, RuleType::for3, "for3_K_" + num, n, L.for_parts[2]);
      bool has_pragma = false;
      for (int p = i - 1; p > begin; --p) {  // an explicit #pragma just before stays as written
        std::string t = text::trim(g.lines[p].text);
        if (t.empty()) continue;
        has_pragma = text::starts_with(t, "#pragma");
        break;
      }
      if (!has_pragma) L.pragma_rule = add_rule(g, RuleType::pragma, "pragma_K_" + num, n, "");
      continue;
    }
    if (text::starts_if(code)) {
      std::size_t at = L.text.find("if", L.text.find_first_not_of(" \t}"));
      std::size_t open = L.text.find('(', at);
      std::size_t close = text::match_paren(L.text, open);
      if (close == std::string::npos) continue;
      L.evolvable = true;
      L.prefix = L.text.substr(0, open);
      L.suffix = L.text.substr(close + 1);
      L.rule = add_rule(g, RuleType::if_cond, "IF_K_" + num, n, L.text.substr(open, close - open + 1));
      continue;
    }
    if (control_statement(code)) continue;
    if (!text::declared_names(code).empty()) continue;
    if (code.back() != ';') continue;
    if (code.find('{') != std::string::npos || code.find('}') != std::string::npos) continue;
    L.evolvable = true;
    L.rule = add_rule(g, RuleType::line, "_K_" + num, n, code);
  }
  // specials of the kernel signature and shared memory
  std::string sig = std::to_string(g.signature_begin + 1);
  if (!g.array_args.empty()) add_rule(g, RuleType::restrict_args, "restrict_K_" + sig, g.signature_begin + 1, "");
  if (g.lines[g.signature_begin].text.find("__launch_bounds__") == std::string::npos)
    add_rule(g, RuleType::launch_bounds, "launchbounds_K_" + sig, g.signature_begin + 1, "");
  for (int i = begin + 1; i < end; ++i) {
    const std::string& t = g.lines[i].text;
    if (text::has_word(t, "__shared__") && !text::has_word(t, "volatile") &&
        t.find("//@gi fixed") == std::string::npos)
      ++g.shared_lines;
  }
  if (g.shared_lines > 0) add_rule(g, RuleType::volatile_shared, "volatile_K", begin + 2, "");
  for (const auto& a : g.scalar_args)
    if (!assigned_in(g, a)) add_rule(g, RuleType::const_arg, "const_K_" + sig + "_" + a, g.signature_begin + 1, a);
  compute_scopes(g);
  return g;
}

Grammar make_grammar(const Problem& p) {
  GrammarOptions opt;
  std::string t = p.launch_bounds_threads();
  if (!t.empty()) opt.launch_threads = t;
  if (p.loop_limit() > 0) opt.loop_limit = p.loop_limit();
  return make_grammar(p.kernel_source(), p.kernel_entry(), p.config_params(), opt, p.name() + " kernel");
}

std::map<std::string, int> rule_counts(const Grammar& g) {
  std::map<std::string, int> c;
  int fixed = 0;
  for (const auto& l : g.lines)
    if (!l.evolvable) ++fixed;
  c["fixed"] = fixed;
  for (const auto& r : g.rules) c[rule_type_name(r.type)]++;
  c["config"] = static_cast<int>(g.params.size());
  return c;
}

namespace {
// A BNF terminal: the text quoted, with a trailing "\n" when it ends a source line.
std::string q(const std::string& s, bool nl = false) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + (nl ? "\\n\"" : "\"");
}
}  // namespace

std::string print_bnf(const Grammar& g, const std::string& tag) {
  std::ostringstream o;
  auto counts = rule_counts(g);
  int total = 0;
  for (auto& [k, v] : counts) total += v;
  o << "# BNF grammar of " << g.entry << " (" << tag << "): " << total << " rules\n#";
  for (auto& [k, v] : counts) o << " " << k << " " << v << ";";
  o << "\n# pragma choices <pragma_K0> (#pragma unroll) and <pragma_K1>..<pragma_K11>; launch bounds <launchbounds_K0>..<launchbounds_K5>\n";
  for (std::size_t i = 0; i < g.lines.size(); ++i) {
    const Line& L = g.lines[i];
    std::string K = "<K_" + std::to_string(i + 1) + ">";
    std::string n = std::to_string(i + 1);
    if (!L.evolvable) {
      o << K << " ::= " << q(L.text, true) << "\n";
    } else if (L.rule >= 0 && g.rules[L.rule].type == RuleType::line) {
      o << K << " ::= " << q(L.indent) << " <_K_" << n << "> \"\\n\"\n";
      o << "<_K_" << n << "> ::= " << q(g.rules[L.rule].text) << "\n";
    } else if (L.rule >= 0) {
      o << K << " ::= " << q(L.prefix) << " <IF_K_" << n << "> " << q(L.suffix, true) << "\n";
      o << "<IF_K_" << n << "> ::= " << q(g.rules[L.rule].text) << "\n";
    } else {
      o << K << " ::= <okdeclaration_K_" << n << "> ";
      if (L.pragma_rule >= 0) o << "<pragma_K_" << n << "> ";
      o << q(L.prefix);
      for (int k = 0; k < 3; ++k) {
        if (k == 1) o << " \"; EVK_GI_OK(evk_gi_guard_" << n << ") && (\"";
        if (k == 2) o << " \"); \"";
        if (L.for_rules[k] >= 0) o << " <" << g.rules[L.for_rules[k]].name << ">";
        else o << " " << q(L.for_parts[k]);
      }
      o << " " << q(L.suffix, true) << "\n";
      o << "<okdeclaration_K_" << n << "> ::= \"unsigned evk_gi_guard_" << n << " = 0;\\n\"\n";
      if (L.pragma_rule >= 0) o << "<pragma_K_" << n << "> ::= \"\"\n";
      for (int k = 0; k < 3; ++k)
        if (L.for_rules[k] >= 0) o << "<" << g.rules[L.for_rules[k]].name << "> ::= " << q(L.for_parts[k]) << "\n";
    }
  }
  o << "<pragma_K0> ::= \"#pragma unroll\\n\"\n";
  for (int k = 1; k <= 11; ++k) o << "<pragma_K" << k << "> ::= \"#pragma unroll " << k << "\\n\"\n";
  for (const auto& r : g.rules) {
    switch (r.type) {
      case RuleType::restrict_args:
        o << "<" << r.name << "> ::= <restrict_" << (g.restrict_default ? "on" : "off") << ">   # array args:";
        for (auto& a : g.array_args) o << " " << a;
        o << "\n<restrict_on> ::= \"__restrict__\"\n<restrict_off> ::= \"\"\n";
        break;
      case RuleType::launch_bounds:
        o << "<" << r.name << "> ::= \"\"\n<launchbounds_K0> ::= \"__launch_bounds__(" << g.options.launch_threads << ")\"\n";
        for (int k = 1; k <= 5; ++k)
          o << "<launchbounds_K" << k << "> ::= \"__launch_bounds__(" << g.options.launch_threads << ", " << k << ")\"\n";
        break;
      case RuleType::volatile_shared:
        o << "<" << r.name << "> ::= <volatile_off>   # " << g.shared_lines << " __shared__ declarations\n"
          << "<volatile_on> ::= \"volatile\"\n<volatile_off> ::= \"\"\n";
        break;
      case RuleType::const_arg:
        o << "<" << r.name << "> ::= <const_off>   # scalar argument " << r.text << "\n";
        break;
      default: break;
    }
  }
  if (g.find("const_K_" + std::to_string(g.signature_begin + 1) + "_" + (g.scalar_args.empty() ? "" : g.scalar_args[0])) >= 0 ||
      !g.rules_of(RuleType::const_arg).empty())
    o << "<const_on> ::= \"const \"\n<const_off> ::= \"\"\n";
  for (const auto& p : g.params) {
    o << "<def_" << p.name << "> ::=";
    for (std::size_t k = 0; k < p.values.size(); ++k)
      o << (k ? " |" : "") << " " << q("#define " + p.name + " " + p.values[k]);
    o << "   # default " << p.default_value << "\n";
  }
  return o.str();
}

}  // namespace evk::gi

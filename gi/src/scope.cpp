// Scoping: for every variable rule, the rules of its type its text may be copied to without moving
// one of its variables out of scope. Derived from declarations, braces and #if groups.
#include <map>

#include "evk/gi/grammar.hpp"
#include "text.hpp"

namespace evk::gi {

namespace {
struct Block {
  int start = 0, end = 0;
};
struct Decl {
  int from = 0;  // first line (0-based) where the name is visible
  int block = 0;
};

// The blocks (braces, #if groups) of the region and the names declared in them.
struct Scopes {
  int end = 0;  // the region's end line
  std::vector<Block> blocks;
  std::vector<int> stack{0};
  std::vector<int> pp_stack;
  std::multimap<std::string, Decl> decls;
  std::vector<std::string> pending_params;  // of a function head, declared in its body block

  // opens a block at line; returns its index
  int push(int line) {
    blocks.push_back({line, end});
    stack.push_back(static_cast<int>(blocks.size()) - 1);
    return stack.back();
  }
  // closes the innermost block at line (never the region's)
  void pop(int line) {
    if (stack.size() > 1) {
      blocks[stack.back()].end = line;
      stack.pop_back();
    }
  }
  // a preprocessor directive d (after its '#') at line i: #if/#el/#endif open and close groups
  void directive(const std::string& d, int i) {
    if (text::starts_with(d, "if")) {
      pp_stack.push_back(push(i));
    } else if (text::starts_with(d, "el")) {
      if (!pp_stack.empty()) {
        while (stack.size() > 1 && stack.back() != pp_stack.back()) pop(i);
        pop(i);
        pp_stack.back() = push(i);
      }
    } else if (text::starts_with(d, "endif")) {
      if (!pp_stack.empty()) {
        while (stack.size() > 1 && stack.back() != pp_stack.back()) pop(i);
        pop(i);
        pp_stack.pop_back();
      }
    }
  }
  // the braces of line i's code; returns the first block opened there (-1: none)
  int braces(const std::string& code, int i) {
    int opened = -1;
    char quote = 0;
    for (std::size_t c = 0; c < code.size(); ++c) {
      char ch = code[c];
      if (quote) {
        if (ch == '\\') ++c;
        else if (ch == quote) quote = 0;
        continue;
      }
      if (ch == '"' || ch == '\'') quote = ch;
      else if (ch == '{') {
        int b = push(i);
        if (opened < 0) opened = b;
        for (const auto& p : pending_params) decls.insert({p, Decl{i, b}});
        pending_params.clear();
      } else if (ch == '}') {
        pop(i);
      }
    }
    return opened;
  }
  // whether id, used at line, is visible there
  bool visible_at(const std::string& id, int line) const {
    auto range = decls.equal_range(id);
    if (range.first == range.second) return true;  // declared outside the region: global
    for (auto it = range.first; it != range.second; ++it) {
      const Block& b = blocks[it->second.block];
      if (line >= it->second.from && line >= b.start && line <= b.end) return true;
    }
    return false;
  }
  // whether all of a rule's variables are visible at line0
  bool fits(const std::vector<std::string>& vars, int line0) const {
    for (const auto& id : vars)
      if (!visible_at(id, line0)) return false;
    return true;
  }
};

// The parameter names of the function head starting at line i (up to its closing parenthesis).
void scope_params(const Grammar& g, int i, int end, std::vector<std::string>& params) {
  std::string joined;
  int j = i;
  for (; j < end; ++j) {
    bool b2 = false;
    joined += text::code_part(g.lines[j].text, b2) + " ";
    auto open = joined.find('(');
    if (open != std::string::npos && text::match_paren(joined, open) != std::string::npos) break;
  }
  auto open = joined.find('(');
  auto close = text::match_paren(joined, open);
  if (close != std::string::npos) {
    for (const auto& arg : text::split_top(joined.substr(open + 1, close - open - 1), ',')) {
      auto ids = text::identifiers(arg);
      if (!ids.empty()) params.push_back(ids.back());
    }
  }
}

// The names a for header declares in its init part.
std::vector<std::string> scope_for_decls(const std::string& code) {
  std::vector<std::string> for_decls;
  auto open = code.find('(');
  auto close = text::match_paren(code, open);
  if (close != std::string::npos) {
    auto parts = text::split_top(code.substr(open + 1, close - open - 1), ';');
    if (!parts.empty()) for_decls = text::declared_names(text::trim(parts[0]) + ";");
  }
  return for_decls;
}

// Each copyable rule's targets (the rules of its type where its variables are visible) and sources.
void scope_targets(Grammar& g, const Scopes& sc) {
  // the variables of a rule's text (identifiers that are not keywords), computed once per rule
  g.sources.assign(g.rules.size(), {});
  for (std::size_t ri = 0; ri < g.rules.size(); ++ri) {
    Rule& r = g.rules[ri];
    r.targets.clear();
    bool copyable = r.type == RuleType::line || r.type == RuleType::if_cond || r.type == RuleType::for1 ||
                    r.type == RuleType::for2 || r.type == RuleType::for3;
    if (!copyable) continue;
    std::vector<std::string> vars;
    for (auto& id : text::identifiers(r.text))
      if (!text::is_keyword(id)) vars.push_back(std::move(id));
    bool self_ok = sc.fits(vars, r.line - 1);
    for (std::size_t ti = 0; ti < g.rules.size(); ++ti) {
      const Rule& t = g.rules[ti];
      if (t.type != r.type) continue;
      if (ti == ri || (self_ok && sc.fits(vars, t.line - 1))) r.targets.push_back(static_cast<int>(ti));
    }
    for (int t : r.targets) g.sources[t].push_back(static_cast<int>(ri));
  }
}
}  // namespace

void compute_scopes(Grammar& g) {
  int n = static_cast<int>(g.lines.size());
  int begin = -1, end = n;
  for (int i = 0; i < n; ++i) {
    std::string t = text::trim(g.lines[i].text);
    if (t == "//@gi begin") begin = i;
    if (t == "//@gi end") end = i;
  }
  Scopes sc;
  sc.end = end;
  sc.blocks = {{begin, end}};
  static const std::vector<std::string> ctl = {"if", "while", "switch", "for", "return"};
  bool in_block = false;
  for (int i = begin + 1; i < end; ++i) {
    std::string code = text::trim(text::code_part(g.lines[i].text, in_block));
    if (code.empty()) continue;
    if (code[0] == '#') {
      sc.directive(text::trim(code.substr(1)), i);
      continue;
    }
    std::vector<std::string> for_decls, line_decls;
    bool is_for = text::starts_for(code);
    if (is_for) {
      for_decls = scope_for_decls(code);
    } else if (!text::starts_keyword(code, ctl, true)) {  // regex ^(\}\s*)?(else\s+)?(if|while|switch|for|return)\b
      bool sig = i >= g.signature_begin && i <= g.signature_end;
      std::string fn;
      if (sig || (code.back() != ';' && !(fn = text::leading_call_name(code)).empty() && !text::is_keyword(fn))) {
        scope_params(g, i, end, sc.pending_params);  // function head: its parameters live in the body
      } else {
        line_decls = text::declared_names(code);
      }
    }
    int top = sc.stack.back();
    for (const auto& nm : line_decls) sc.decls.insert({nm, Decl{i + 1, top}});
    int opened = sc.braces(code, i);
    if (!for_decls.empty()) {
      int b = opened;
      if (b < 0) {  // unbraced body: the header and the next line
        sc.blocks.push_back({i, i + 1});
        b = static_cast<int>(sc.blocks.size()) - 1;
      }
      for (const auto& nm : for_decls) sc.decls.insert({nm, Decl{i, b}});
    }
  }
  scope_targets(g, sc);
}

}  // namespace evk::gi

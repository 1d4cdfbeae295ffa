#include "text.hpp"

#include <cctype>
#include <set>
#include <string_view>

namespace evk::gi::text {

std::string leading_ws(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t");
  return a == std::string::npos ? s : s.substr(0, a);
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

std::string code_part(const std::string& line, bool& in_block) {
  std::string out;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_block) {
      if (c == '*' && i + 1 < line.size() && line[i + 1] == '/') {
        in_block = false;
        ++i;
        out += ' ';
      }
      continue;
    }
    if (quote) {
      out += c;
      if (c == '\\' && i + 1 < line.size()) out += line[++i];
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      out += c;
      continue;
    }
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    if (c == '/' && i + 1 < line.size() && line[i + 1] == '*') {
      in_block = true;
      ++i;
      continue;
    }
    out += c;
  }
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

static bool id_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
static bool id_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::vector<std::string> identifiers(const std::string& code) {
  std::vector<std::string> ids;
  std::size_t i = 0;
  char prev_sig = 0, prev2 = 0;  // last two non-space characters before the current token
  while (i < code.size()) {
    char c = code[i];
    if (c == '"' || c == '\'') {
      char q = c;
      ++i;
      while (i < code.size() && code[i] != q) i += code[i] == '\\' ? 2 : 1;
      ++i;
      prev2 = prev_sig;
      prev_sig = q;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < code.size() && (id_char(code[i]) || code[i] == '.')) ++i;
      prev2 = prev_sig;
      prev_sig = '0';
      continue;
    }
    if (id_start(c)) {
      std::size_t b = i;
      while (i < code.size() && id_char(code[i])) ++i;
      bool member = prev_sig == '.' || (prev_sig == '>' && prev2 == '-');
      if (!member) ids.push_back(code.substr(b, i - b));
      prev2 = prev_sig;
      prev_sig = 'a';
      continue;
    }
    if (!std::isspace(static_cast<unsigned char>(c))) {
      prev2 = prev_sig;
      prev_sig = c;
    }
    ++i;
  }
  return ids;
}

bool is_keyword(const std::string& id) {
  static const std::set<std::string> kw = {
      "auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default", "do", "double",
      "else", "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "nullptr",
      "register", "return", "short", "signed", "sizeof", "static", "struct", "switch", "true", "typedef",
      "typename", "union", "unsigned", "void", "volatile", "while", "__shared__", "__device__", "__global__",
      "__constant__", "__restrict__", "__forceinline__", "__syncthreads", "template", "new", "delete",
      "throw", "static_cast", "reinterpret_cast", "const_cast", "asm", "__launch_bounds__"};
  return kw.count(id) > 0;
}

std::size_t match_paren(const std::string& s, std::size_t open) {
  int depth = 0;
  char quote = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '(') ++depth;
    else if (c == ')' && --depth == 0) return i;
  }
  return std::string::npos;
}

std::vector<std::string> split_top(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      cur += c;
      if (c == '\\' && i + 1 < s.size()) cur += s[++i];
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

namespace {
struct Tok {
  std::string s;
  bool ident;
};
std::vector<Tok> tokens(const std::string& code) {
  std::vector<Tok> t;
  std::size_t i = 0;
  while (i < code.size()) {
    char c = code[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (id_start(c)) {
      std::size_t b = i;
      while (i < code.size() && id_char(code[i])) ++i;
      t.push_back({code.substr(b, i - b), true});
      continue;
    }
    if (c == ':' && i + 1 < code.size() && code[i + 1] == ':') {
      t.push_back({"::", false});
      i += 2;
      continue;
    }
    t.push_back({std::string(1, c), false});
    ++i;
  }
  return t;
}
}  // namespace

std::vector<std::string> declared_names(const std::string& code) {
  static const std::set<std::string> quals = {"const", "volatile", "static", "extern", "__shared__", "__constant__",
                                              "__device__", "register", "constexpr", "typename", "struct",
                                              "__restrict__", "signed", "unsigned", "long", "short", "inline",
                                              "__forceinline__"};
  static const std::set<std::string> not_types = {"return", "else", "goto", "case", "delete", "new", "throw",
                                                  "if", "for", "while", "do", "switch", "break", "continue",
                                                  "default", "sizeof", "asm", "using", "typedef"};
  auto t = tokens(code);
  std::size_t i = 0;
  bool had_qual_type = false;  // "unsigned x" / "long y"
  while (i < t.size() && t[i].ident && quals.count(t[i].s)) {
    if (t[i].s == "unsigned" || t[i].s == "signed" || t[i].s == "long" || t[i].s == "short") had_qual_type = true;
    ++i;
  }
  if (i >= t.size()) return {};
  // type name (possibly qualified / templated), unless the qualifier itself was the type
  bool type_seen = false;
  if (t[i].ident && !not_types.count(t[i].s)) {
    std::size_t save = i;
    ++i;
    while (i + 1 < t.size() && t[i].s == "::" && t[i + 1].ident) i += 2;
    if (i < t.size() && t[i].s == "<") {  // template arguments
      int d = 0;
      for (; i < t.size(); ++i) {
        if (t[i].s == "<") ++d;
        if (t[i].s == ">" && --d == 0) {
          ++i;
          break;
        }
      }
    }
    type_seen = true;
    // "unsigned x = 1": the identifier after the qualifier is the name
    if (had_qual_type && (i >= t.size() || t[i].s == "=" || t[i].s == ";" || t[i].s == "[" || t[i].s == ",")) {
      i = save;
      type_seen = true;
    }
  } else if (!had_qual_type) {
    return {};
  }
  if (!type_seen && !had_qual_type) return {};
  auto declarator = [&](std::size_t& k) -> std::string {
    while (k < t.size() && (t[k].s == "*" || t[k].s == "&" || t[k].s == "__restrict__" || t[k].s == "const")) ++k;
    if (k < t.size() && t[k].ident && !is_keyword(t[k].s)) {
      std::string n = t[k].s;
      ++k;
      if (k >= t.size() || t[k].s == "=" || t[k].s == ";" || t[k].s == "[" || t[k].s == "," || t[k].s == "(" ||
          t[k].s == "{")
        return n;
    }
    return "";
  };
  std::vector<std::string> names;
  std::size_t k = i;
  std::string first = declarator(k);
  if (first.empty()) return {};
  // "f(x)" after a type-like identifier: a call or a constructor-style declaration; accept only
  // when the type token is a known builtin or the statement has no operators (best effort).
  names.push_back(first);
  // further declarators at top-level commas (outside parentheses/brackets/braces)
  int depth = 0;
  for (; k < t.size(); ++k) {
    const std::string& s = t[k].s;
    if (s == "(" || s == "[" || s == "{") ++depth;
    else if (s == ")" || s == "]" || s == "}") --depth;
    else if (s == "," && depth == 0) {
      std::size_t j = k + 1;
      std::string n = declarator(j);
      if (!n.empty()) names.push_back(n);
    }
  }
  return names;
}

int brace_delta(const std::string& code, int* opens, int* closes) {
  int o = 0, c = 0;
  char quote = 0;
  for (std::size_t i = 0; i < code.size(); ++i) {
    char ch = code[i];
    if (quote) {
      if (ch == '\\') ++i;
      else if (ch == quote) quote = 0;
      continue;
    }
    if (ch == '"' || ch == '\'') quote = ch;
    else if (ch == '{') ++o;
    else if (ch == '}') ++c;
  }
  if (opens) *opens = o;
  if (closes) *closes = c;
  return o - c;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::size_t find_word(const std::string& s, const std::string& word, std::size_t from) {
  if (word.empty()) return std::string::npos;
  for (std::size_t at = s.find(word, from); at != std::string::npos; at = s.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    if ((at == 0 || !is_word_char(s[at - 1])) && (end == s.size() || !is_word_char(s[end]))) return at;
  }
  return std::string::npos;
}

namespace {
// ECMAScript \s for char: space, \t, \n, \v, \f, \r.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
std::size_t skip_space(const std::string& s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}
}  // namespace

std::size_t find_call(const std::string& s, const std::string& name, std::size_t from) {
  if (from == std::string::npos) return std::string::npos;
  for (std::size_t at = find_word(s, name, from); at != std::string::npos; at = find_word(s, name, at + 1)) {
    const std::size_t i = skip_space(s, at + name.size());
    if (i < s.size() && s[i] == '(') return at;
  }
  return std::string::npos;
}

bool assigns(const std::string& s, const std::string& name) {
  const auto at_op = [&](std::size_t i, const char* op) { return s.compare(i, 2, op) == 0; };
  for (std::size_t at = find_word(s, name); at != std::string::npos; at = find_word(s, name, at + 1)) {
    // after: [op]= and a character other than '=', or ++ / --
    std::size_t i = skip_space(s, at + name.size());
    if (at_op(i, "++") || at_op(i, "--")) return true;
    std::size_t eq = i;
    if (at_op(i, "<<") || at_op(i, ">>")) eq = i + 2;
    else if (i < s.size() && std::string_view("-+*/%&|^").find(s[i]) != std::string_view::npos) eq = i + 1;
    for (std::size_t e : {i, eq})  // '=' right after the name, or after the operator
      if (e + 1 < s.size() && s[e] == '=' && s[e + 1] != '=') return true;
    // before: ++ / -- or &, then optional whitespace
    std::size_t b = at;
    while (b > 0 && is_space(s[b - 1])) --b;
    if (b >= 1 && s[b - 1] == '&') return true;
    if (b >= 2 && (s.compare(b - 2, 2, "++") == 0 || s.compare(b - 2, 2, "--") == 0)) return true;
  }
  return false;
}

namespace {
// `word` at i followed by '(' after optional whitespace
bool call_at(const std::string& s, std::size_t i, const char* word) {
  const std::size_t n = std::char_traits<char>::length(word);
  if (s.compare(i, n, word) != 0) return false;
  const std::size_t j = skip_space(s, i + n);
  return j < s.size() && s[j] == '(';
}
// where a statement head starts after an optional '}' and whitespace
std::size_t after_close_brace(const std::string& s) { return !s.empty() && s[0] == '}' ? skip_space(s, 1) : 0; }
// after "else" and at least one whitespace character at i, or npos
std::size_t after_else(const std::string& s, std::size_t i) {
  if (s.compare(i, 4, "else") != 0 || i + 4 >= s.size() || !is_space(s[i + 4])) return std::string::npos;
  return skip_space(s, i + 4);
}
}  // namespace

bool starts_for(const std::string& s) { return call_at(s, 0, "for"); }

bool starts_if(const std::string& s) {
  const std::size_t i = after_close_brace(s);
  if (call_at(s, i, "if")) return true;
  const std::size_t e = after_else(s, i);
  return e != std::string::npos && call_at(s, e, "if");
}

bool starts_keyword(const std::string& s, const std::vector<std::string>& keywords, bool with_else) {
  const auto keyword_at = [&](std::size_t i) {
    for (const auto& k : keywords)
      if (s.compare(i, k.size(), k) == 0 && (i + k.size() == s.size() || !is_word_char(s[i + k.size()]))) return true;
    return false;
  };
  const std::size_t i = after_close_brace(s);
  if (keyword_at(i)) return true;
  if (!with_else) return false;
  const std::size_t e = after_else(s, i);
  return e != std::string::npos && keyword_at(e);
}

std::string leading_call_name(const std::string& s) {
  const auto in_prefix = [](char c) {
    return is_word_char(c) || is_space(c) || c == '*' || c == '&' || c == ':' || c == '<' || c == '>' || c == ',';
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (is_word_char(s[i]) && (i == 0 || !is_word_char(s[i - 1]))) {  // a word starts here
      std::size_t j = i;
      while (j < s.size() && is_word_char(s[j])) ++j;
      const std::size_t k = skip_space(s, j);
      if (k < s.size() && s[k] == '(') return s.substr(i, j - i);
    }
    if (!in_prefix(s[i])) break;  // the prefix cannot extend past this character
  }
  return "";
}

std::string erase_with_space_before(const std::string& s, const std::string& word) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = s.find(word); at != std::string::npos; at = s.find(word, from)) {
    std::size_t b = at;
    while (b > from && is_space(s[b - 1])) --b;
    out.append(s, from, b - from);
    from = at + word.size();
  }
  return out + s.substr(from);
}

}  // namespace evk::gi::text

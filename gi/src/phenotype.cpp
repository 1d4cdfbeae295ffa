// Phenotype tier 1: a small C preprocessor (conditional compilation + object-like macro expansion)
// so that mutations hidden by #if/#ifdef or by macro values are recognised as duplicates.
#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "evk/gi/grammar.hpp"
#include "text.hpp"

namespace evk::gi {

namespace {
using Defs = std::map<std::string, std::string>;

// Object-like macro expansion as the C preprocessor does it: an identifier that names a macro is
// replaced by the macro's text, itself expanded with that macro disabled (a macro never expands
// inside its own expansion: `#define A A A` gives "A A", `#define N (N+1)` gives "(N+1)"). Chains of
// distinct macros can still grow exponentially (A -> B B, B -> C C, ...): past kMaxExpansion bytes or
// kMaxNesting nested macros the expansion stops with an exception, and the caller falls back to the
// raw text.
constexpr std::size_t kMaxExpansion = std::size_t(1) << 20;
constexpr std::size_t kMaxNesting = 256;

void expand_into(const std::string& s, const Defs& defs, std::vector<const std::string*>& disabled, std::string& out) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (out.size() > kMaxExpansion) throw std::length_error("macro expansion over 1 MiB");
    const char c = s[i];
    if (c == '"' || c == '\'') {
      std::size_t b = i++;
      while (i < s.size() && s[i] != c) i += s[i] == '\\' ? 2 : 1;
      ++i;
      out.append(s, b, std::min(i, s.size()) - b);
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '_')) ++i;
      out.append(s, b, i - b);
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      const std::string id = s.substr(b, i - b);
      auto it = defs.find(id);
      bool off = it == defs.end();
      for (const std::string* d : disabled) off = off || *d == id;
      if (off) {
        out += id;
        continue;
      }
      if (disabled.size() >= kMaxNesting) throw std::length_error("macros nested over 256 deep");
      disabled.push_back(&it->first);
      expand_into(it->second, defs, disabled, out);
      disabled.pop_back();
      continue;
    }
    out += c;
    ++i;
  }
}

std::string expand(const std::string& s, const Defs& defs) {
  std::string out;
  std::vector<const std::string*> disabled;
  expand_into(s, defs, disabled, out);
  return out;
}

// Integer expression evaluator for #if (precedence climbing).
struct Eval {
  std::vector<std::string> t;
  std::size_t p = 0;
  const std::string& peek() const {
    static const std::string none;
    return p < t.size() ? t[p] : none;
  }
  long long primary() {
    std::string s = peek();
    if (s.empty()) throw std::runtime_error("expression ends early");
    ++p;
    if (s == "(") {
      long long v = ternary();
      if (peek() != ")") throw std::runtime_error("missing )");
      ++p;
      return v;
    }
    if (s == "!") return !primary();
    if (s == "~") return ~primary();
    if (s == "-") {
      const long long v = primary();
      if (v == std::numeric_limits<long long>::min()) throw std::runtime_error("overflow in #if");
      return -v;
    }
    if (s == "+") return primary();
    if (std::isdigit(static_cast<unsigned char>(s[0]))) {
      std::string d = s;
      while (!d.empty() && (d.back() == 'u' || d.back() == 'U' || d.back() == 'l' || d.back() == 'L')) d.pop_back();
      return std::stoll(d, nullptr, 0);
    }
    if (s == "true") return 1;
    return 0;  // unknown identifier: 0, as in C
  }
  static int prec(const std::string& op) {
    if (op == "*" || op == "/" || op == "%") return 10;
    if (op == "+" || op == "-") return 9;
    if (op == "<<" || op == ">>") return 8;
    if (op == "<" || op == ">" || op == "<=" || op == ">=") return 7;
    if (op == "==" || op == "!=") return 6;
    if (op == "&") return 5;
    if (op == "^") return 4;
    if (op == "|") return 3;
    if (op == "&&") return 2;
    if (op == "||") return 1;
    return -1;
  }
  long long binary(int min_prec) {
    long long lhs = primary();
    for (;;) {
      std::string op = peek();
      int pr = prec(op);
      if (pr < min_prec || pr < 0) return lhs;
      ++p;
      long long rhs = binary(pr + 1);
      // what C leaves undefined (overflow, shifts out of range) ends the evaluation: the caller
      // keeps the raw text
      const bool wrap = (op == "*" && __builtin_mul_overflow(lhs, rhs, &lhs)) ||
                        (op == "+" && __builtin_add_overflow(lhs, rhs, &lhs)) ||
                        (op == "-" && __builtin_sub_overflow(lhs, rhs, &lhs)) ||
                        ((op == "/" || op == "%") && lhs == std::numeric_limits<long long>::min() && rhs == -1) ||
                        ((op == "<<" || op == ">>") && (rhs < 0 || rhs > 62 || lhs < 0)) ||
                        (op == "<<" && lhs > (std::numeric_limits<long long>::max() >> rhs));
      if (wrap) throw std::runtime_error("overflow in #if");
      if (op == "*" || op == "+" || op == "-") {
      } else if (op == "/") lhs = rhs ? lhs / rhs : 0;
      else if (op == "%") lhs = rhs ? lhs % rhs : 0;
      else if (op == "<<") lhs <<= rhs;
      else if (op == ">>") lhs >>= rhs;
      else if (op == "<") lhs = lhs < rhs;
      else if (op == ">") lhs = lhs > rhs;
      else if (op == "<=") lhs = lhs <= rhs;
      else if (op == ">=") lhs = lhs >= rhs;
      else if (op == "==") lhs = lhs == rhs;
      else if (op == "!=") lhs = lhs != rhs;
      else if (op == "&") lhs &= rhs;
      else if (op == "^") lhs ^= rhs;
      else if (op == "|") lhs |= rhs;
      else if (op == "&&") lhs = lhs && rhs;
      else if (op == "||") lhs = lhs || rhs;
    }
  }
  long long ternary() {
    long long c = binary(1);
    if (peek() == "?") {
      ++p;
      long long a = ternary();
      if (peek() != ":") throw std::runtime_error("missing :");
      ++p;
      long long b = ternary();
      return c ? a : b;
    }
    return c;
  }
};

std::vector<std::string> expr_tokens(const std::string& s) {
  std::vector<std::string> t;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      t.push_back(s.substr(b, i - b));
      continue;
    }
    static const char* two[] = {"&&", "||", "==", "!=", "<=", ">=", "<<", ">>"};
    bool done = false;
    for (const char* op : two)
      if (s.compare(i, 2, op) == 0) {
        t.push_back(op);
        i += 2;
        done = true;
        break;
      }
    if (!done) t.push_back(std::string(1, s[i++]));
  }
  return t;
}

long long eval_if(const std::string& expr, const Defs& defs) {
  // replace defined(X) / defined X first
  auto raw = expr_tokens(expr);
  std::string rebuilt;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == "defined") {
      std::string name;
      if (i + 1 < raw.size() && raw[i + 1] == "(" && i + 3 < raw.size()) {
        name = raw[i + 2];
        i += 3;
      } else if (i + 1 < raw.size()) {
        name = raw[++i];
      }
      rebuilt += defs.count(name) ? " 1 " : " 0 ";
    } else {
      rebuilt += " " + raw[i] + " ";
    }
  }
  Eval e;
  e.t = expr_tokens(expand(rebuilt, defs));
  long long v = e.ternary();
  if (e.p != e.t.size()) throw std::runtime_error("trailing tokens");
  return v;
}

std::string squeeze(const std::string& s) {
  std::string o;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !o.empty()) o += ' ';
    space = false;
    o += c;
  }
  return o;
}
}  // namespace

std::map<std::string, std::string> defines_of(const std::vector<std::string>& options, std::vector<std::string>* rest) {
  std::map<std::string, std::string> d;
  for (const auto& o : options) {
    if (text::starts_with(o, "-D") && o.size() > 2) {
      auto eq = o.find('=');
      if (eq == std::string::npos) d[std::string(o.begin() + 2, o.end())] = "1";
      else d[std::string(o.begin() + 2, o.begin() + static_cast<std::ptrdiff_t>(eq))] = std::string(o.begin() + static_cast<std::ptrdiff_t>(eq) + 1, o.end());
    } else if (rest) {
      rest->push_back(o);
    }
  }
  return d;
}

std::string preprocess(const std::string& source, const std::map<std::string, std::string>& defines) {
  Defs defs = defines;
  std::vector<std::string> lines;
  {
    std::string cur, acc;
    for (std::size_t i = 0; i <= source.size(); ++i) {
      if (i == source.size() || source[i] == '\n') {
        if (!cur.empty() && cur.back() == '\\') {
          cur.pop_back();
          acc += cur + " ";
        } else {
          lines.push_back(acc + cur);
          acc.clear();
        }
        cur.clear();
      } else {
        cur += source[i];
      }
    }
  }
  struct Group {
    bool parent_active, active, taken;
  };
  std::vector<Group> st;
  auto active = [&] { return st.empty() || st.back().active; };
  std::string out;
  bool in_block = false;
  try {
    for (const auto& raw : lines) {
      std::string code = text::trim(text::code_part(raw, in_block));
      if (code.empty()) continue;
      if (code[0] == '#') {
        std::string d = text::trim(code.substr(1));
        auto word_end = d.find_first_of(" \t(");
        std::string kw = d.substr(0, word_end);
        std::string arg = word_end == std::string::npos ? "" : text::trim(d.substr(word_end));
        if (kw == "if" || kw == "ifdef" || kw == "ifndef") {
          bool pa = active();
          bool v = false;
          if (pa) {
            if (kw == "ifdef") v = defs.count(arg) > 0;
            else if (kw == "ifndef") v = defs.count(arg) == 0;
            else v = eval_if(arg, defs) != 0;
          }
          st.push_back({pa, pa && v, pa && v});
        } else if (kw == "elif") {
          if (st.empty()) throw std::runtime_error("#elif without #if");
          Group& g = st.back();
          bool v = g.parent_active && !g.taken && eval_if(arg, defs) != 0;
          g.active = v;
          g.taken = g.taken || v;
        } else if (kw == "else") {
          if (st.empty()) throw std::runtime_error("#else without #if");
          Group& g = st.back();
          g.active = g.parent_active && !g.taken;
          g.taken = true;
        } else if (kw == "endif") {
          if (st.empty()) throw std::runtime_error("#endif without #if");
          st.pop_back();
        } else if (!active()) {
          continue;
        } else if (kw == "define") {
          auto sp = arg.find_first_of(" \t(");
          std::string name = arg.substr(0, sp);
          if (sp != std::string::npos && arg[sp] == '(') {
            out += "#define " + squeeze(arg) + "\n";  // function-like: kept, not expanded
          } else {
            defs[name] = sp == std::string::npos ? "" : text::trim(arg.substr(sp));
          }
        } else if (kw == "undef") {
          defs.erase(arg);
        } else {
          out += "#" + squeeze(expand(d, defs)) + "\n";
        }
        continue;
      }
      if (!active()) continue;
      out += squeeze(expand(code, defs)) + "\n";
    }
  } catch (const std::exception& e) {
    // Could not evaluate: the raw text is the phenotype (never a false duplicate).
    std::string raw = "#unevaluated " + std::string(e.what()) + "\n" + source;
    for (auto& [k, v] : defines) raw += "\n-D" + k + "=" + v;
    return raw;
  }
  return out;
}

}  // namespace evk::gi

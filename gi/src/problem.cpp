// The non-virtual parts of the app <-> engine contract: size-class names and `requires` constraints.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "evk/error.hpp"
#include "evk/gi/problem.hpp"
#include "text.hpp"

namespace evk::gi {

std::string Constraint::text() const {
  std::ostringstream o;
  o.precision(15);
  o << name << " " << op << " " << value;
  return o.str();
}

Constraint parse_constraint(const std::string& line, const std::string& what) {
  const auto parts = text::split_ws(line);
  if (parts.size() != 3) input_error(what, "'" + line + "' is not 'NAME OP VALUE'");
  Constraint c;
  c.name = parts[0];
  c.op = parts[1];
  for (char ch : c.name)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
      input_error(what, "'" + c.name + "' is not a property name");
  if (c.op != "<=" && c.op != ">=" && c.op != "==" && c.op != "!=")
    input_error(what, "'" + c.op + "' is not one of <= >= == != in '" + line + "'");
  char* end = nullptr;
  c.value = std::strtod(parts[2].c_str(), &end);
  if (end == parts[2].c_str() || *end != '\0' || !std::isfinite(c.value))
    input_error(what, "'" + parts[2] + "' is not a number in '" + line + "'");
  return c;
}

bool constraint_holds(const Constraint& c, const Properties& p) {
  auto it = p.find(c.name);
  if (it == p.end()) return true;
  const double v = it->second;
  if (c.op == "<=") return v <= c.value;
  if (c.op == ">=") return v >= c.value;
  if (c.op == "==") return v == c.value;
  return v != c.value;
}

std::string violated_constraint(const std::vector<std::string>& lines, const Properties& p) {
  for (const auto& l : lines)
    if (!constraint_holds(parse_constraint(l), p)) return l;
  return "";
}

std::vector<std::string> Problem::class_names() const {
  std::vector<std::string> n;
  for (const auto& c : size_classes()) n.push_back(c.name);
  return n;
}

void Problem::check_class(const std::string& name) const {
  std::string all;
  for (const auto& c : size_classes()) {
    if (c.name == name) return;
    all += (all.empty() ? "" : ", ") + c.name;
  }
  input_error("--class", "'" + name + "' is not a size class of " + this->name() + " (" + all + ")");
}

}  // namespace evk::gi

#include "evk/strings.hpp"

#include <cmath>

#include "evk/error.hpp"

namespace evk {
std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::uint64_t parse_size(const std::string& s, const std::string& option, double step) {
  const std::string what = "'" + s + "' is not a size like 500M, 3.1G or 1000000";
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    input_error(option, what);
  }
  std::string unit = s.substr(used);
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "bp") == 0) unit.resize(unit.size() - 2);
  double mul = -1;
  if (unit.empty()) mul = 1;
  else if (unit == "k" || unit == "K") mul = step;
  else if (unit == "m" || unit == "M") mul = step * step;
  else if (unit == "g" || unit == "G") mul = step * step * step;
  if (mul < 0 || !(v > 0)) input_error(option, what);
  return static_cast<std::uint64_t>(std::llround(v * mul));
}
}  // namespace evk

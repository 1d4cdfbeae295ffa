// Small string helpers shared by the tools, the GI engine and the registry.
#pragma once
#include <string>

namespace evk {
// s without leading and trailing spaces, tabs, carriage returns and newlines.
std::string trim(const std::string& s);
}  // namespace evk

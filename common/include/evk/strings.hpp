// Small string helpers shared by the tools, the GI engine and the registry.
#pragma once
#include <cstdint>
#include <string>

namespace evk {
// s without leading and trailing spaces, tabs, carriage returns and newlines.
std::string trim(const std::string& s);

// "500M", "3.1G", "64k", "2Mbp" or a plain number, scaled by `step` per unit (1000 for bases,
// 1024 for bytes); InputError naming `option` for anything else or a value that is not positive.
std::uint64_t parse_size(const std::string& s, const std::string& option, double step);
}  // namespace evk

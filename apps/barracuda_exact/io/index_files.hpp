// bwa 0.7 index files PREFIX.{bwt,sa,pac,ann,amb}: raw little-endian binaries and two text files,
// read with full validation (sizes, header agreement between .bwt and .sa, .ann/.amb/.pac against
// the BWT) and written byte for byte as `bwa index` writes them.
#pragma once
#include <string>

#include "core/index.hpp"

namespace evk::barracuda_exact {

// Throws InputError naming the file and the problem.
BwtIndex read_index(const std::string& prefix);
// The reference length (l_pac) from PREFIX.ann's first line, without reading the index (what a map
// job's kernel-variant selection needs before the index is loaded). Throws InputError.
long long read_reference_length(const std::string& prefix);
// All five files are written to temporary names and renamed together at the end.
void write_index(const BwtIndex& idx, const std::string& prefix);

}  // namespace evk::barracuda_exact

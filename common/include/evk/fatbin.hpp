// What an nvcc fatbin holds (its entries' headers; nothing is decompressed), and which of it a GPU
// would run: machine code (SASS) built for its architecture family, else PTX the driver compiles.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace evk {

struct FatbinEntry {
  bool ptx = false;  // PTX (compute_<arch>); else machine code (sm_<arch>)
  int arch = 0;      // 75, 90, 121, ...
};

// The entries of every fatbin container in data, in order. Throws std::invalid_argument when data
// does not start with a fatbin container or an entry runs past the end.
std::vector<FatbinEntry> fatbin_entries(const void* data, std::size_t size);

// What a GPU of compute capability cc (major * 10 + minor) runs: "sm_86" (machine code of its
// family, the newest at or below cc, as the driver picks it), "compute_121 (PTX, compiled by the
// driver)" when only PTX at or below cc fits, or "" when nothing does.
std::string fatbin_code_for(const std::vector<FatbinEntry>& entries, int cc);

// "sm_75 sm_80 ... compute_121": the entries, one word each, machine code first, each once.
std::string fatbin_summary(const std::vector<FatbinEntry>& entries);

}  // namespace evk

// Counting bases in bwa's 2-bit packings without popcount (baseline x86-64 has no popcount
// instruction; bwa counts with a table too): per byte of four bases, the counts of A, C, G, T packed
// in 8-bit fields (field c: base c). A field holds up to 255, so a sum of table entries may cover
// at most 63 bytes (15 words of 16 bases) before its fields are taken apart.
#pragma once
#include <array>
#include <cstdint>

namespace evk::barracuda_exact {

inline constexpr std::array<std::uint32_t, 256> kBaseCounts = [] {
  std::array<std::uint32_t, 256> t{};
  for (unsigned v = 0; v < 256; ++v)
    for (unsigned f = 0; f < 4; ++f) t[v] += std::uint32_t{1} << (8 * (v >> (2 * f) & 3));
  return t;
}();

// The four bases' counts among a word's 16 bases (packed as kBaseCounts).
inline std::uint32_t count4_packed(std::uint32_t w) {
  return kBaseCounts[w & 0xff] + kBaseCounts[w >> 8 & 0xff] + kBaseCounts[w >> 16 & 0xff] + kBaseCounts[w >> 24];
}
inline std::uint32_t count_field(std::uint32_t packed, int c) { return packed >> (8 * c) & 0xff; }

}  // namespace evk::barracuda_exact

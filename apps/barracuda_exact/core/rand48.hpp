// glibc's srand48 / lrand48 / drand48 (one 48-bit LCG: x = 0x5DEECE66D x + 11 mod 2^48), which
// bwa uses: to replace ambiguous reference bases in `bwa index` (seed 11) and to pick one of a
// repeat's occurrences in `bwa samse` (seeded with the index's seed), so the same sequence of
// calls gives bwa's choices exactly.
#pragma once
#include <cstdint>

namespace evk::barracuda_exact {

class Rand48 {
 public:
  explicit Rand48(std::uint32_t seed) : x_((static_cast<std::uint64_t>(seed) << 16) | 0x330Eu) {}
  std::uint32_t lrand() {  // lrand48: the top 31 bits
    step();
    return static_cast<std::uint32_t>(x_ >> 17);
  }
  double drand() {  // drand48: x / 2^48, exactly (glibc builds the double from the 48 bits)
    step();
    return static_cast<double>(x_) / 281474976710656.0;
  }
  // As n calls, in O(log n): the n-fold map x -> A x + C built by squaring (products mod 2^64 keep
  // their low 48 bits exact).
  void skip(std::uint64_t n) {
    constexpr std::uint64_t mask = (1ull << 48) - 1;
    std::uint64_t a = 0x5DEECE66Dull, c = 0xB, A = 1, C = 0;
    for (; n; n >>= 1) {
      if (n & 1) {
        A = (a * A) & mask;
        C = (a * C + c) & mask;
      }
      c = (a * c + c) & mask;
      a = (a * a) & mask;
    }
    x_ = (A * x_ + C) & mask;
  }

 private:
  void step() { x_ = (0x5DEECE66Dull * x_ + 0xB) & ((1ull << 48) - 1); }
  std::uint64_t x_;
};

}  // namespace evk::barracuda_exact

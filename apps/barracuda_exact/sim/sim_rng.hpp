// The simulators' random numbers: xoshiro256** seeded through splitmix64, with our own uniform,
// normal, exponential and geometric draws (std:: distributions differ between standard libraries;
// these give the same bytes wherever the same libm is used). Each contig / read chunk gets its own
// stream, sim_seed(seed, stream), so the output does not depend on the thread count.
#pragma once
#include <cmath>
#include <cstdint>

namespace evk::sim {

inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// One stream's seed from the user's seed and the stream's index (contig, chunk, family table).
inline std::uint64_t sim_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t x = seed;
  std::uint64_t a = splitmix64(x);
  x = a ^ (stream * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull);
  return splitmix64(x);
}

class SimRng {
 public:
  explicit SimRng(std::uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::uint64_t below(std::uint64_t n) { return n ? static_cast<std::uint64_t>(uniform() * static_cast<double>(n)) % n : 0; }
  std::int64_t range(std::int64_t lo, std::int64_t hi) {  // [lo, hi]
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo + 1)));
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double log_uniform(double lo, double hi) { return lo * std::exp(std::log(hi / lo) * uniform()); }
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }
  double normal() {  // Box-Muller, one value per call
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  // Failures before the first success of a Bernoulli(p) trial (p in (0, 1]).
  std::uint64_t geometric(double p) {
    if (p >= 1.0) return 0;
    const double g = std::floor(std::log(1.0 - uniform()) / std::log1p(-p));
    return g > 1e18 ? static_cast<std::uint64_t>(1e18) : static_cast<std::uint64_t>(g);
  }
  std::uint64_t poisson(double mean) {  // small means (Knuth); large ones by the normal
    if (mean > 30) {
      const double x = std::round(mean + std::sqrt(mean) * normal());
      return x < 0 ? 0 : static_cast<std::uint64_t>(x);
    }
    const double l = std::exp(-mean);
    std::uint64_t k = 0;
    for (double p = uniform(); p > l; p *= uniform()) ++k;
    return k;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace evk::sim

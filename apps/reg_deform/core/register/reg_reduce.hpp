// Deterministic parallel reductions for the CPU stages: chunk partial sums added in chunk order,
// so a result does not depend on thread timing (same iterates run to run).
#pragma once
#include <cstddef>
#include <map>
#include <mutex>

#include "evk/parallel.hpp"

namespace evk::reg_deform {

// fn(begin, end) -> double partial over [begin, end); the partials are summed in index order.
template <class Fn>
double ordered_sum(std::size_t n, Fn fn, int threads = 0) {
  std::mutex mu;
  std::map<std::size_t, double> parts;
  parallel_for(
      n,
      [&](std::size_t b, std::size_t e) {
        const double s = fn(b, e);
        std::lock_guard<std::mutex> lock(mu);
        parts[b] = s;
      },
      threads);
  double total = 0;
  for (const auto& kv : parts) total += kv.second;
  return total;
}

}  // namespace evk::reg_deform

#include "evk/parallel.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace evk {

int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn, int threads) {
  if (n == 0) return;
  std::size_t t = static_cast<std::size_t>(threads > 0 ? threads : default_threads());
  t = std::min(t, n);
  if (t <= 1) {
    fn(0, n);
    return;
  }
  std::exception_ptr err;
  std::mutex mu;
  std::vector<std::thread> pool;
  pool.reserve(t);
  for (std::size_t i = 0; i < t; ++i) {
    std::size_t b = n * i / t, e = n * (i + 1) / t;
    pool.emplace_back([&, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!err) err = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (err) std::rethrow_exception(err);
}

}  // namespace evk

// Is fresh memory slow on this host? ms per 4 MiB block: allocated, touched, freed (fresh), or
// the same block touched again (reuse); one and two threads; then with glibc keeping freed memory.
#include <malloc.h>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
using clk = std::chrono::steady_clock;
static double run(bool fresh, int threads, int iters, std::size_t bytes) {
  auto body = [&] {
    std::vector<unsigned char> keep(bytes);
    for (int i = 0; i < iters; ++i) {
      if (fresh) {
        auto* p = static_cast<unsigned char*>(std::malloc(bytes));
        std::memset(p, i, bytes);
        asm volatile("" ::"r"(p) : "memory");
        std::free(p);
      } else {
        std::memset(keep.data(), i, bytes);
        asm volatile("" ::"r"(keep.data()) : "memory");
      }
    }
  };
  const auto t = clk::now();
  std::vector<std::thread> ts;
  for (int k = 0; k < threads; ++k) ts.emplace_back(body);
  for (auto& x : ts) x.join();
  return std::chrono::duration<double, std::milli>(clk::now() - t).count() / iters;
}
int main() {
  const std::size_t b = 4u << 20;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      mallopt(M_MMAP_THRESHOLD, 32 << 20);
      mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
    for (int th : {1, 2, 4})
      std::printf("%s threads %d: fresh %.3f ms, reuse %.3f ms per 4 MiB block\n", pass ? "mallopt" : "default", th,
                  run(true, th, 200, b), run(false, th, 200, b));
  }
}

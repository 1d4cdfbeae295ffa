// Cost of fresh pages on this host: 4 MiB mapped, touched and unmapped each time (what malloc does
// for large blocks before its threshold adapts), and a 2 MiB file read into a fresh or a reused buffer.
#include <sys/mman.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
using clk = std::chrono::steady_clock;
template <class F> static double per(int threads, int iters, F f) {
  const auto t = clk::now();
  std::vector<std::thread> ts;
  for (int k = 0; k < threads; ++k) ts.emplace_back([&, k] { for (int i = 0; i < iters; ++i) f(k, i); });
  for (auto& x : ts) x.join();
  return std::chrono::duration<double, std::milli>(clk::now() - t).count() / iters;
}
int main(int argc, char** argv) {
  const std::size_t b = 4u << 20;
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  for (int th : {1, 2})
    std::printf("mmap+touch+munmap threads %d: %.3f ms per 4 MiB\n", th, per(th, 100, [&](int, int i) {
      void* p = mmap(nullptr, b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      std::memset(p, i, b);
      munmap(p, b);
    }));
  const std::size_t fb = 2u << 20;
  { std::vector<char> d(fb, 7);
    for (int k = 0; k < 4; ++k) { std::ofstream o(dir + "/diag" + std::to_string(k) + ".bin", std::ios::binary); o.write(d.data(), fb); } }
  std::vector<std::vector<char>> keep(2, std::vector<char>(fb));
  for (int th : {1, 2}) {
    const double fresh = per(th, 200, [&](int k, int i) {
      std::ifstream in(dir + "/diag" + std::to_string((k * 2 + i) % 4) + ".bin", std::ios::binary);
      std::vector<char> v(fb);
      in.read(v.data(), fb);
    });
    const double reuse = per(th, 200, [&](int k, int i) {
      std::ifstream in(dir + "/diag" + std::to_string((k * 2 + i) % 4) + ".bin", std::ios::binary);
      in.read(keep[k].data(), fb);
    });
    std::printf("read 2 MiB file threads %d: fresh buffer %.3f ms, reused %.3f ms\n", th, fresh, reuse);
  }
}

// A minimal parallel loop for the CPU references: splits [0, n) into contiguous chunks.
#pragma once
#include <cstddef>
#include <functional>

namespace evk {
// threads <= 0: std::thread::hardware_concurrency(). fn(begin, end) runs on each chunk; the first
// exception thrown by any chunk is rethrown after all threads have joined.
void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn, int threads = 0);
int default_threads();
}  // namespace evk

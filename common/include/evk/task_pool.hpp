// One pool of worker threads shared by every parallel stage of a tool (barracuda `map`: BGZF
// inflation, record parsing, matching on the CPU, hit resolution, record formatting; stereo SGM:
// staging copies between pageable and pinned host memory). A stage thread calls
// parallel_for and works on its own loop too, so a loop never waits for a task that has not started
// (no deadlock when several stages share the pool, or with zero workers).
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace evk {

class TaskPool {
 public:
  explicit TaskPool(int workers);  // workers <= 0: none (every loop runs on its caller)
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()); }
  // Queues f for a worker (or runs it now when there are none). f must not throw.
  void submit(std::function<void()> f);
  // fn(begin, end) over [0, n) in chunks of at most `grain` items, on the workers and the caller;
  // returns when every chunk is done and rethrows the first exception of any chunk.
  void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn);

 private:
  void work();
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace evk

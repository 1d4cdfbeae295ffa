#include "evk/task_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

namespace evk {

TaskPool::TaskPool(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void TaskPool::work() {
  for (;;) {
    std::function<void()> f;
    {
      std::unique_lock<std::mutex> l(m_);
      cv_.wait(l, [&] { return stop_ || !q_.empty(); });
      if (q_.empty()) return;  // stop_ and drained
      f = std::move(q_.front());
      q_.pop_front();
    }
    f();
  }
}

void TaskPool::submit(std::function<void()> f) {
  if (threads_.empty()) {
    f();
    return;
  }
  {
    std::lock_guard<std::mutex> l(m_);
    q_.push_back(std::move(f));
  }
  cv_.notify_one();
}

namespace {
// One parallel loop: chunks are claimed through `next`; the caller waits for `done` == chunks.
struct Loop {
  std::size_t n = 0, grain = 1, chunks = 0;
  const std::function<void(std::size_t, std::size_t)>* fn = nullptr;
  std::atomic<std::size_t> next{0};
  std::mutex m;
  std::condition_variable cv;
  std::size_t done = 0;
  std::exception_ptr err;
  // Runs chunks until none is left; the loop's fn stays valid while done < chunks.
  void run() {
    for (;;) {
      const std::size_t c = next.fetch_add(1);
      if (c >= chunks) return;
      const std::size_t b = c * grain, e = std::min(n, b + grain);
      std::exception_ptr x;
      try {
        (*fn)(b, e);
      } catch (...) {
        x = std::current_exception();
      }
      std::lock_guard<std::mutex> l(m);
      if (x && !err) err = x;
      if (++done == chunks) cv.notify_all();
    }
  }
};
}  // namespace

void TaskPool::parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = (n + grain - 1) / grain;
  if (chunks == 1 || threads_.empty()) {
    for (std::size_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    return;
  }
  auto loop = std::make_shared<Loop>();
  loop->n = n;
  loop->grain = grain;
  loop->chunks = chunks;
  loop->fn = &fn;
  const std::size_t helpers = std::min(chunks - 1, threads_.size());
  {
    std::lock_guard<std::mutex> l(m_);
    for (std::size_t i = 0; i < helpers; ++i) q_.push_back([loop] { loop->run(); });
  }
  if (helpers == 1) cv_.notify_one(); else cv_.notify_all();
  loop->run();
  std::unique_lock<std::mutex> l(loop->m);
  loop->cv.wait(l, [&] { return loop->done == loop->chunks; });
  if (loop->err) std::rethrow_exception(loop->err);
}

}  // namespace evk

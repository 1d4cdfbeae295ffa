// Bounded queues between the stages of `map`: they bound the memory in flight (a full queue
// blocks its producer) and carry the shutdown (close() wakes everyone; pop() then drains and
// returns nullopt). OrderedQueue hands items out in sequence order whatever order they arrive in
// (batches mapped by several lanes), holding at most `window` items ahead of the next one.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>

#include "evk/queue.hpp"

namespace evk::barracuda_exact {

template <class T>
using Queue = evk::Queue<T>;  // evk/queue.hpp

template <class T>
class OrderedQueue {
 public:
  explicit OrderedQueue(std::size_t window) : window_(window ? window : 1) {}
  // Blocks while seq is `window` or more ahead of the next item to hand out.
  bool push(std::uint64_t seq, T v) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return closed_ || seq < next_ + window_; });
    if (closed_) return false;
    items_.emplace(seq, std::move(v));
    cv_.notify_all();
    return true;
  }
  // The item with the next sequence number; nullopt once closed (after finish(): when all are out).
  std::optional<T> pop() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return closed_ || finished_ || (!items_.empty() && items_.begin()->first == next_); });
    if (closed_ || items_.empty() || items_.begin()->first != next_) return std::nullopt;
    T v = std::move(items_.begin()->second);
    items_.erase(items_.begin());
    ++next_;
    cv_.notify_all();
    return v;
  }
  // No more pushes: pop() drains what is in order and then returns nullopt.
  void finish() {
    std::lock_guard<std::mutex> l(m_);
    finished_ = true;
    cv_.notify_all();
  }
  void close() {  // abandon (an error somewhere)
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  std::size_t window_;
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, T> items_;
  bool closed_ = false, finished_ = false;
  std::mutex m_;
  std::condition_variable cv_;
};

}  // namespace evk::barracuda_exact

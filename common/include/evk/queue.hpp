// A bounded queue between threads: a full queue blocks its producer (memory in flight stays
// bounded), close() wakes everyone, pop() then drains what is left and returns nullopt. Used by
// barracuda_exact's map stages and reg_deform's register-many.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace evk {

template <class T>
class Queue {
 public:
  explicit Queue(std::size_t cap) : cap_(cap ? cap : 1) {}
  bool push(T v) {  // false when closed
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return closed_ || q_.size() < cap_; });
    if (closed_) return false;
    q_.push_back(std::move(v));
    cv_.notify_all();
    return true;
  }
  std::optional<T> pop() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return closed_ || !q_.empty(); });
    if (q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return v;
  }
  void close() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    cv_.notify_all();
  }
  void set_capacity(std::size_t cap) {  // a smaller one blocks producers until the queue is below it
    std::lock_guard<std::mutex> l(m_);
    cap_ = cap ? cap : 1;
    cv_.notify_all();
  }

 private:
  std::size_t cap_;
  std::deque<T> q_;
  bool closed_ = false;
  std::mutex m_;
  std::condition_variable cv_;
};

}  // namespace evk

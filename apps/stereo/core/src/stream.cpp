// The overlapped frame pipeline of stream.hpp.
#include "evk/stereo/stream.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "evk/error.hpp"

namespace evk::stereo {

namespace {
using clk = std::chrono::steady_clock;
double ms_since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }

// ---- SGM on the GPU ----------------------------------------------------------------------------
class SgmGpuMatcher final : public FrameMatcher {
 public:
  SgmGpuMatcher(const SgmParams& p, const std::function<std::unique_ptr<SgmDevice>()>& make, int slots, SgmTuning t)
      : p_(p), tune_(t) {
    validate(p);
    for (int i = 0; i < std::max(1, slots); ++i) {
      Slot s;
      s.dev = make();
      slots_.push_back(std::move(s));
    }
  }
  ~SgmGpuMatcher() override {
    for (Slot& s : slots_) {
      s.dev->synchronize();
      free_host(s);
      s.pipeline.reset();
    }
  }
  int slots() const override { return static_cast<int>(slots_.size()); }

  // Reader thread: the pixels in the pipeline's form (census keeps 16 bits, else 8 as read_gray).
  void prepare(Frame& f) const override {
    const bool deep = p_.cost == CostKind::census && std::max(f.left.maxval, f.right.maxval) > 255;
    f.bits = deep ? 16 : 8;
    const Image16* im[2] = {&f.left, &f.right};
    for (int i = 0; i < 2; ++i) {
      const Image16& g = *im[i];
      if (deep) {
        f.bytes[i].resize(g.pixels.size() * 2);
        std::memcpy(f.bytes[i].data(), g.pixels.data(), f.bytes[i].size());
      } else {
        f.bytes[i] = to_image8(g).pixels;
      }
    }
  }

  void submit(int slot, Frame& f) override {
    if (f.bits == 0) prepare(f);
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    const int W = f.left.width, H = f.left.height;
    if (f.right.width != W || f.right.height != H)
      input_error("frame " + std::to_string(f.index), "left and right images differ in size");
    if (!s.pipeline || s.pipeline->layout().width != W || s.pipeline->layout().height != H ||
        s.pipeline->bits() != f.bits) {
      s.dev->synchronize();
      free_host(s);
      s.pipeline.reset();
      s.pipeline = std::make_unique<SgmPipeline>(*s.dev, p_, W, H, f.bits, tune_);
      const std::size_t n = static_cast<std::size_t>(W) * H;
      s.px = n * static_cast<std::size_t>(f.bits / 8);
      for (int i = 0; i < 2; ++i) s.in[i] = static_cast<std::uint8_t*>(s.dev->alloc_host(s.px));
      for (int i = 0; i < 2; ++i) s.out[i] = static_cast<std::int16_t*>(s.dev->alloc_host(n * 2));
      s.w = W;
      s.h = H;
    }
    for (int i = 0; i < 2; ++i) std::memcpy(s.in[i], f.bytes[i].data(), s.px);
    s.dev->mark(0);
    s.pipeline->upload(s.in[0], s.in[1]);
    s.dev->mark(1);
    s.pipeline->compute();
    s.dev->mark(2);
    s.pipeline->download(s.out[0], p_.post.right ? s.out[1] : nullptr);
    s.dev->mark(3);
    s.busy = true;
  }

  StereoResult collect(int slot) override {
    Slot& s = slots_[static_cast<std::size_t>(slot)];
    s.dev->synchronize();
    s.busy = false;
    s.up = s.dev->elapsed_ms(0, 1);
    s.kern = s.dev->elapsed_ms(1, 2);
    s.down = s.dev->elapsed_ms(2, 3);
    const std::size_t n = static_cast<std::size_t>(s.w) * s.h;
    StereoResult r;
    r.left = {s.w, s.h, std::vector<std::int16_t>(s.out[0], s.out[0] + n)};
    if (p_.post.right) r.right = {s.w, s.h, std::vector<std::int16_t>(s.out[1], s.out[1] + n)};
    return r;
  }
  void finish(StereoResult& r) const override {
    if (p_.post.speckle_size > 0) speckle_cpu(r.left, p_.post.speckle_size, p_.post.speckle_range);
  }
  void device_times(int slot, double& up, double& kern, double& down) const override {
    const Slot& s = slots_[static_cast<std::size_t>(slot)];
    up = s.up;
    kern = s.kern;
    down = s.down;
  }

 private:
  struct Slot {
    std::unique_ptr<SgmDevice> dev;
    std::unique_ptr<SgmPipeline> pipeline;
    std::uint8_t* in[2] = {nullptr, nullptr};
    std::int16_t* out[2] = {nullptr, nullptr};
    std::size_t px = 0;
    int w = 0, h = 0;
    bool busy = false;
    double up = 0, kern = 0, down = 0;
  };
  void free_host(Slot& s) {
    for (auto*& q : s.in)
      if (q) s.dev->release_host(q), q = nullptr;
    for (auto*& q : s.out)
      if (q) s.dev->release_host(q), q = nullptr;
  }
  SgmParams p_;
  SgmTuning tune_;
  std::vector<Slot> slots_;
};

class SyncMatcher final : public FrameMatcher {
 public:
  explicit SyncMatcher(std::function<StereoResult(const Frame&)> f) : f_(std::move(f)) {}
  int slots() const override { return 1; }
  void submit(int, Frame& f) override { r_ = f_(f); }
  StereoResult collect(int) override { return std::move(r_); }

 private:
  std::function<StereoResult(const Frame&)> f_;
  StereoResult r_;
};

// First exception of any thread; later ones are dropped.
struct Failure {
  std::mutex mu;
  std::exception_ptr e;
  std::atomic<bool> stop{false};
  void set(std::exception_ptr x) {
    std::lock_guard<std::mutex> g(mu);
    if (!e) e = x;
    stop = true;
  }
};
}  // namespace

std::unique_ptr<FrameMatcher> sgm_device_matcher(const SgmParams& p, std::function<std::unique_ptr<SgmDevice>()> make,
                                                 int slots, SgmTuning t) {
  return std::make_unique<SgmGpuMatcher>(p, make, slots, t);
}
std::unique_ptr<FrameMatcher> sgm_gpu_matcher(const SgmParams& p, int device, int slots, SgmTuning t) {
  return sgm_device_matcher(p, [device] { return cuda_sgm_device(device); }, slots, t);
}
std::unique_ptr<FrameMatcher> sync_matcher(std::function<StereoResult(const Frame&)> f) {
  return std::make_unique<SyncMatcher>(std::move(f));
}

StreamStats run_stream(int n, const std::function<Frame(int)>& load, FrameMatcher& m,
                       const std::function<void(int, StereoResult&)>& store, const StreamOptions& o) {
  StreamStats st;
  st.readers = std::max(1, o.readers);
  st.writers = std::max(1, o.writers);
  st.slots = m.slots();
  const auto t0 = clk::now();
  Failure fail;
  std::mutex mu;
  std::condition_variable cv_decoded, cv_space, cv_out;
  std::map<int, Frame> decoded;
  std::deque<std::pair<int, StereoResult>> out;
  bool out_done = false;
  std::atomic<int> next{0};
  double read_ms = 0, write_ms = 0;

  std::vector<std::thread> readers, writers;
  for (int r = 0; r < st.readers; ++r)
    readers.emplace_back([&] {
      for (;;) {
        const int i = next++;
        if (i >= n || fail.stop) return;
        try {
          {  // bounded: wait until the frame is within `queue` of the oldest one not yet taken
            std::unique_lock<std::mutex> g(mu);
            cv_space.wait(g, [&] { return fail.stop || decoded.empty() || i < decoded.begin()->first + o.queue; });
          }
          const auto t = clk::now();
          Frame f = load(i);
          f.index = i;
          m.prepare(f);
          const double ms = ms_since(t);
          std::lock_guard<std::mutex> g(mu);
          read_ms += ms;
          decoded.emplace(i, std::move(f));
          cv_decoded.notify_all();
        } catch (...) {
          fail.set(std::current_exception());
          cv_decoded.notify_all();
          cv_space.notify_all();
          return;
        }
      }
    });
  for (int w = 0; w < st.writers; ++w)
    writers.emplace_back([&] {
      for (;;) {
        std::pair<int, StereoResult> job;
        {
          std::unique_lock<std::mutex> g(mu);
          cv_out.wait(g, [&] { return !out.empty() || out_done || fail.stop; });
          if (out.empty()) return;
          job = std::move(out.front());
          out.pop_front();
        }
        try {
          const auto t = clk::now();
          m.finish(job.second);
          store(job.first, job.second);
          const double ms = ms_since(t);
          std::lock_guard<std::mutex> g(mu);
          write_ms += ms;
        } catch (...) {
          fail.set(std::current_exception());
          cv_out.notify_all();
          cv_decoded.notify_all();
          cv_space.notify_all();
          return;
        }
      }
    });

  // The matcher on this thread: frame i on slot i % S; a slot's previous frame is collected first.
  const int S = std::max(1, m.slots());
  std::vector<int> on_slot(static_cast<std::size_t>(S), -1);
  auto collect = [&](int slot) {
    const auto t = clk::now();
    StereoResult r = m.collect(slot);
    st.wait_ms += ms_since(t);
    double up = 0, kern = 0, down = 0;
    m.device_times(slot, up, kern, down);
    st.upload_ms += up;
    st.kernel_ms += kern;
    st.download_ms += down;
    std::lock_guard<std::mutex> g(mu);
    out.emplace_back(on_slot[static_cast<std::size_t>(slot)], std::move(r));
    on_slot[static_cast<std::size_t>(slot)] = -1;
    cv_out.notify_one();
  };
  try {
    for (int i = 0; i < n && !fail.stop; ++i) {
      const int slot = i % S;
      if (on_slot[static_cast<std::size_t>(slot)] >= 0) collect(slot);
      Frame f;
      {
        std::unique_lock<std::mutex> g(mu);
        cv_decoded.wait(g, [&] { return fail.stop || decoded.count(i); });
        if (fail.stop) break;
        f = std::move(decoded.at(i));
        decoded.erase(i);
        cv_space.notify_all();
      }
      const auto t = clk::now();
      m.submit(slot, f);
      st.submit_ms += ms_since(t);
      on_slot[static_cast<std::size_t>(slot)] = i;
      ++st.frames;
    }
    for (int k = 0; k < S; ++k) {  // drain in submission order
      const int slot = (static_cast<int>(st.frames) + k) % S;
      if (on_slot[static_cast<std::size_t>(slot)] >= 0 && !fail.stop) collect(slot);
    }
  } catch (...) {
    fail.set(std::current_exception());
  }
  {
    std::lock_guard<std::mutex> g(mu);
    out_done = true;
  }
  cv_out.notify_all();
  cv_space.notify_all();
  cv_decoded.notify_all();
  for (auto& t : readers) t.join();
  for (auto& t : writers) t.join();
  if (fail.e) std::rethrow_exception(fail.e);
  st.seconds = ms_since(t0) / 1000.0;
  st.fps = st.seconds > 0 ? st.frames / st.seconds : 0;
  st.read_ms = read_ms;
  st.write_ms = write_ms;
  // Per-frame time of each stage per thread; the device's copy engines and kernels overlap across
  // slots, so its per-frame cost is the largest of the three.
  const double f = static_cast<double>(std::max<long long>(1, st.frames));
  const double dev = std::max({st.upload_ms, st.kernel_ms, st.download_ms}) / f;
  const std::pair<double, const char*> stages[] = {
      {read_ms / f / st.readers, "read/decode"},
      {write_ms / f / st.writers, "post/encode/write"},
      {dev > 0 ? st.submit_ms / f : (st.submit_ms + st.wait_ms) / f, dev > 0 ? "host side of the device (pinned copies, launches)" : "matching"},
      {dev, st.kernel_ms >= std::max(st.upload_ms, st.download_ms) ? "device kernels" : "PCIe copies"}};
  double worst = -1;
  for (const auto& [ms, name] : stages)
    if (ms > worst) worst = ms, st.bound = name;
  return st;
}

}  // namespace evk::stereo

// The overlapped frame pipeline of stream.hpp.
#include "core/stream.hpp"

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
  SgmGpuMatcher(const SgmParams& p, const std::function<std::unique_ptr<SgmDevice>()>& make, int slots, SgmTuning t,
                std::shared_ptr<const RectifyMaps> rect)
      : p_(p), tune_(t), rect_(std::move(rect)) {
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
  // With a rig the frame is raw: where that form is the raw pixels (16 bits, or 8 of maxval 255) the
  // device rectifies them; else (a conversion that rounds) they are rectified here first, so the
  // result is what rectifying, then converting, gives on the CPU backend.
  void prepare(Frame& f) const override {
    const bool deep = sgm_pixel_bits(p_, f.left, f.right) == 16;
    f.bits = deep ? 16 : 8;
    f.raw = rect_ && sgm_pixels_exact(p_, f.left, f.right);
    if (rect_ && !f.raw) {
      rectify_image(*rect_, 0, f.left);
      rectify_image(*rect_, 1, f.right);
    }
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
    if (rect_) check_rectify_size(*rect_, W, H);
    if (!s.pipeline || s.pipeline->layout().width != W || s.pipeline->layout().height != H ||
        s.pipeline->bits() != f.bits) {
      s.dev->synchronize();
      free_host(s);
      s.pipeline.reset();
      s.pipeline = std::make_unique<SgmPipeline>(*s.dev, p_, W, H, f.bits, tune_);
      if (rect_) s.pipeline->set_rectify(*rect_);
      const std::size_t n = static_cast<std::size_t>(W) * H;
      s.px = n * static_cast<std::size_t>(f.bits / 8);
      for (int i = 0; i < 2; ++i) s.in[i] = static_cast<std::uint8_t*>(s.dev->alloc_host(s.px));
      for (int i = 0; i < 2; ++i) s.out[i] = static_cast<std::int16_t*>(s.dev->alloc_host(n * 2));
      s.w = W;
      s.h = H;
    }
    for (int i = 0; i < 2; ++i) std::memcpy(s.in[i], f.bytes[i].data(), s.px);
    s.dev->mark(0);
    s.pipeline->upload(s.in[0], s.in[1], f.raw);
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
  std::shared_ptr<const RectifyMaps> rect_;
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
                                                 int slots, SgmTuning t, std::shared_ptr<const RectifyMaps> rectify) {
  return std::make_unique<SgmGpuMatcher>(p, make, slots, t, std::move(rectify));
}
std::unique_ptr<FrameMatcher> sgm_gpu_matcher(const SgmParams& p, int device, int slots, SgmTuning t,
                                              std::shared_ptr<const RectifyMaps> rectify) {
  return sgm_device_matcher(p, [device] { return cuda_sgm_device(device); }, slots, t, std::move(rectify));
}
std::unique_ptr<FrameMatcher> sync_matcher(std::function<StereoResult(const Frame&)> f) {
  return std::make_unique<SyncMatcher>(std::move(f));
}

namespace {
// One run of run_stream: the queues between the reader threads, the matcher (the calling thread)
// and the writer threads.
class Stream {
 public:
  Stream(int n, const std::function<Frame(int)>& load, FrameMatcher& m,
         const std::function<void(int, StereoResult&)>& store, const StreamOptions& o)
      : n_(n), load_(load), m_(m), store_(store), o_(o) {}
  StreamStats run();

 private:
  void read_loop();
  void write_loop();
  void match();
  void collect(int slot);
  void stop_all();  // wakes every waiting thread after a failure
  std::string bound() const;

  const int n_;
  const std::function<Frame(int)>& load_;
  FrameMatcher& m_;
  const std::function<void(int, StereoResult&)>& store_;
  const StreamOptions& o_;
  StreamStats st_;
  Failure fail_;
  std::mutex mu_;
  std::condition_variable cv_decoded_, cv_space_, cv_out_;
  std::map<int, Frame> decoded_;
  std::deque<std::pair<int, StereoResult>> out_;
  bool out_done_ = false;
  std::atomic<int> next_{0};
  double read_ms_ = 0, write_ms_ = 0;
  std::vector<int> on_slot_;  // the frame each slot holds (-1: none)
};

void Stream::stop_all() {
  cv_out_.notify_all();
  cv_decoded_.notify_all();
  cv_space_.notify_all();
}

void Stream::read_loop() {
  for (;;) {
    const int i = next_++;
    if (i >= n_ || fail_.stop) return;
    try {
      {  // bounded: wait until the frame is within `queue` of the oldest one not yet taken
        std::unique_lock<std::mutex> g(mu_);
        cv_space_.wait(g, [&] { return fail_.stop || decoded_.empty() || i < decoded_.begin()->first + o_.queue; });
      }
      const auto t = clk::now();
      Frame f = load_(i);
      f.index = i;
      m_.prepare(f);
      const double ms = ms_since(t);
      std::lock_guard<std::mutex> g(mu_);
      read_ms_ += ms;
      decoded_.emplace(i, std::move(f));
      cv_decoded_.notify_all();
    } catch (...) {
      fail_.set(std::current_exception());
      cv_decoded_.notify_all();
      cv_space_.notify_all();
      return;
    }
  }
}

void Stream::write_loop() {
  for (;;) {
    std::pair<int, StereoResult> job;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_out_.wait(g, [&] { return !out_.empty() || out_done_ || fail_.stop; });
      if (out_.empty()) return;
      job = std::move(out_.front());
      out_.pop_front();
    }
    try {
      const auto t = clk::now();
      m_.finish(job.second);
      store_(job.first, job.second);
      const double ms = ms_since(t);
      std::lock_guard<std::mutex> g(mu_);
      write_ms_ += ms;
    } catch (...) {
      fail_.set(std::current_exception());
      stop_all();
      return;
    }
  }
}

void Stream::collect(int slot) {
  const auto t = clk::now();
  StereoResult r = m_.collect(slot);
  st_.wait_ms += ms_since(t);
  double up = 0, kern = 0, down = 0;
  m_.device_times(slot, up, kern, down);
  st_.upload_ms += up;
  st_.kernel_ms += kern;
  st_.download_ms += down;
  std::lock_guard<std::mutex> g(mu_);
  out_.emplace_back(on_slot_[static_cast<std::size_t>(slot)], std::move(r));
  on_slot_[static_cast<std::size_t>(slot)] = -1;
  cv_out_.notify_one();
}

// The matcher on this thread: frame i on slot i % S; a slot's previous frame is collected first.
void Stream::match() {
  const int S = std::max(1, m_.slots());
  on_slot_.assign(static_cast<std::size_t>(S), -1);
  for (int i = 0; i < n_ && !fail_.stop; ++i) {
    const int slot = i % S;
    if (on_slot_[static_cast<std::size_t>(slot)] >= 0) collect(slot);
    Frame f;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_decoded_.wait(g, [&] { return fail_.stop || decoded_.count(i); });
      if (fail_.stop) break;
      f = std::move(decoded_.at(i));
      decoded_.erase(i);
      cv_space_.notify_all();
    }
    const auto t = clk::now();
    m_.submit(slot, f);
    st_.submit_ms += ms_since(t);
    on_slot_[static_cast<std::size_t>(slot)] = i;
    ++st_.frames;
  }
  for (int k = 0; k < S; ++k) {  // drain in submission order
    const int slot = (static_cast<int>(st_.frames) + k) % S;
    if (on_slot_[static_cast<std::size_t>(slot)] >= 0 && !fail_.stop) collect(slot);
  }
}

// Per-frame time of each stage per thread; the device's copy engines and kernels overlap across
// slots, so its per-frame cost is the largest of the three.
std::string Stream::bound() const {
  const double f = static_cast<double>(std::max<long long>(1, st_.frames));
  const double dev = std::max({st_.upload_ms, st_.kernel_ms, st_.download_ms}) / f;
  const std::pair<double, const char*> stages[] = {
      {read_ms_ / f / st_.readers, "read/decode"},
      {write_ms_ / f / st_.writers, "post/encode/write"},
      {dev > 0 ? st_.submit_ms / f : (st_.submit_ms + st_.wait_ms) / f, dev > 0 ? "host side of the device (pinned copies, launches)" : "matching"},
      {dev, st_.kernel_ms >= std::max(st_.upload_ms, st_.download_ms) ? "device kernels" : "PCIe copies"}};
  double worst = -1;
  std::string b;
  for (const auto& [ms, name] : stages)
    if (ms > worst) worst = ms, b = name;
  return b;
}

StreamStats Stream::run() {
  st_.readers = std::max(1, o_.readers);
  st_.writers = std::max(1, o_.writers);
  st_.slots = m_.slots();
  const auto t0 = clk::now();
  std::vector<std::thread> readers, writers;
  for (int r = 0; r < st_.readers; ++r) readers.emplace_back([this] { read_loop(); });
  for (int w = 0; w < st_.writers; ++w) writers.emplace_back([this] { write_loop(); });
  try {
    match();
  } catch (...) {
    fail_.set(std::current_exception());
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    out_done_ = true;
  }
  stop_all();
  for (auto& t : readers) t.join();
  for (auto& t : writers) t.join();
  if (fail_.e) std::rethrow_exception(fail_.e);
  st_.seconds = ms_since(t0) / 1000.0;
  st_.fps = st_.seconds > 0 ? st_.frames / st_.seconds : 0;
  st_.read_ms = read_ms_;
  st_.write_ms = write_ms_;
  st_.bound = bound();
  return st_;
}
}  // namespace

StreamStats run_stream(int n, const std::function<Frame(int)>& load, FrameMatcher& m,
                       const std::function<void(int, StereoResult&)>& store, const StreamOptions& o) {
  return Stream(n, load, m, store, o).run();
}

}  // namespace evk::stereo

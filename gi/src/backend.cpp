// Population compilation (parallel NVRTC through the disk cache) and the real GPU evaluator.
#include <atomic>
#include <exception>
#include <stdexcept>
#include <thread>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/parallel.hpp"

namespace evk::gi {

std::vector<Compiled> compile_parallel(const std::vector<CompileRequest>& reqs, int cc, bool want_cubin, int threads,
                                       const std::string& cache_dir, bool use_cache,
                                       const std::function<void(std::size_t, Compiled&&)>& done) {
  std::vector<Compiled> out(reqs.size());
  if (threads <= 0) threads = default_threads();
  threads = std::max(1, std::min<int>(threads, static_cast<int>(reqs.size())));
  CompileCache cache(cache_dir.empty() ? CompileCache::default_dir() : std::filesystem::path(cache_dir));
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (;;) {
      std::size_t i = next++;
      if (i >= reqs.size()) return;
      const CompileRequest& r = reqs[i];
      Compiled& c = out[i];
      if (!r.options_ok) {
        c.log = r.log;
        if (done) done(i, std::move(c));
        continue;
      }
      NvrtcRequest q;
      q.source = r.source;
      q.options = r.options;
      q.cc = cc;
      q.want_cubin = want_cubin;
      try {
        NvrtcResult res = (use_cache && want_cubin) ? cache.compile(q) : nvrtc_compile(q);
        c.ok = res.ok;
        c.log = res.log;
        c.seconds = res.seconds;
        c.cached = res.ok && res.log == "(cached)";
        c.cubin = std::move(res.cubin);
        if (c.ok) c.code_hash = c.cubin.empty() ? fnv1a64(r.source.data(), r.source.size()) : fnv1a64(c.cubin.data(), c.cubin.size());
      } catch (const std::exception& e) {
        c.ok = false;
        c.log = e.what();
      }
      if (done) done(i, std::move(c));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

namespace {
class GpuEvaluator : public Evaluator {
 public:
  GpuEvaluator(const Problem& p, Worker& w, const GpuEvaluatorOptions& o) : p_(p), w_(w), o_(o) {}
  GpuEvaluator(const Problem& p, std::unique_ptr<Worker> w, const GpuEvaluatorOptions& o)
      : owned_(std::move(w)), p_(p), w_(*owned_), o_(o) {}
  DeviceSummary device() override {
    DeviceSummary d = w_.device();
    cc_ = d.cc;
    return d;
  }
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) override {
    return w_.set_case(seed, holdout, size_class);
  }
  std::vector<std::string> options(const Config& c) const override { return p_.compile_options(c); }
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override { return compile_impl(vs, {}); }
  void compile_stream(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) override {
    compile_impl(vs, done);
  }
  std::vector<Compiled> compile_impl(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) {
    std::vector<CompileRequest> reqs(vs.size());
    for (std::size_t i = 0; i < vs.size(); ++i) {
      reqs[i].source = vs[i].source;
      try {
        reqs[i].options = p_.compile_options(vs[i].config);
        reqs[i].options.insert(reqs[i].options.end(), vs[i].options.begin(), vs[i].options.end());
        if (o_.ticks) reqs[i].options.push_back("-DEVK_GI_TICKS=1");
        if (o_.deadline) reqs[i].options.push_back("-DEVK_GI_DEADLINE=1");
      } catch (const std::exception& e) {
        reqs[i].options_ok = false;
        reqs[i].log = std::string("illegal configuration: ") + e.what();
      }
    }
    // cc_ once known: compile() may run in a background thread beside run() (search.cpp), which can
    // restart the worker
    int cc = cc_.load() > 0 ? cc_.load() : device().cc;
    return compile_parallel(reqs, cc, true, o_.compile_threads, o_.cache_dir, o_.use_cache, done);
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) override {
    return w_.run(c.cubin, p_.kernel_entry(), cfg, t, timeout_s);
  }
  int restarts() const override { return w_.restarts(); }

 private:
  std::unique_ptr<Worker> owned_;
  const Problem& p_;
  Worker& w_;
  GpuEvaluatorOptions o_;
  std::atomic<int> cc_{0};
};
// Several lanes (one evaluator per GPU) as one: the case on all of them, compiles on lane 0.
class LaneEvaluator : public Evaluator {
 public:
  explicit LaneEvaluator(std::vector<std::unique_ptr<Evaluator>> lanes) : lanes_(std::move(lanes)) {
    if (lanes_.empty()) throw std::logic_error("make_lane_evaluator: no lanes");
  }
  DeviceSummary device() override {
    std::vector<DeviceSummary> d(lanes_.size());
    for (std::size_t i = 0; i < lanes_.size(); ++i) d[i] = lanes_[i]->device();
    for (std::size_t i = 1; i < d.size(); ++i)
      if (d[i].name != d[0].name || d[i].cc != d[0].cc)
        input_error("--devices", "mixed GPUs (" + d[0].name + " on device " + std::to_string(d[0].index) + ", " +
                                     d[i].name + " on device " + std::to_string(d[i].index) +
                                     "): one search runs on one kind of GPU");
    return d[0];
  }
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) override {
    std::vector<CaseInfo> info(lanes_.size());
    std::vector<std::exception_ptr> err(lanes_.size());
    std::vector<std::thread> ts;
    for (std::size_t i = 0; i < lanes_.size(); ++i)
      ts.emplace_back([&, i] {
        try {
          info[i] = lanes_[i]->set_case(seed, holdout, size_class);
        } catch (...) {
          err[i] = std::current_exception();
        }
      });
    for (auto& t : ts) t.join();
    for (auto& e : err)
      if (e) std::rethrow_exception(e);
    return info[0];
  }
  std::vector<std::string> options(const Config& c) const override { return lanes_[0]->options(c); }
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override { return lanes_[0]->compile(vs); }
  void compile_stream(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) override {
    lanes_[0]->compile_stream(vs, done);
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) override {
    return lanes_[0]->run(c, cfg, t, timeout_s);
  }
  int restarts() const override {
    int n = 0;
    for (const auto& l : lanes_) n += l->restarts();
    return n;
  }
  int lanes() const override { return static_cast<int>(lanes_.size()); }
  RunResult run_on(int lane, const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) override {
    return lanes_.at(static_cast<std::size_t>(lane))->run(c, cfg, t, timeout_s);
  }
  DeviceSummary lane_device(int lane) override { return lanes_.at(static_cast<std::size_t>(lane))->device(); }

 private:
  std::vector<std::unique_ptr<Evaluator>> lanes_;
};

}  // namespace

std::unique_ptr<Evaluator> make_lane_evaluator(std::vector<std::unique_ptr<Evaluator>> lanes) {
  return std::make_unique<LaneEvaluator>(std::move(lanes));
}

std::unique_ptr<Evaluator> make_gpu_evaluator(const Problem& p, Worker& w, const GpuEvaluatorOptions& o) {
  return std::make_unique<GpuEvaluator>(p, w, o);
}

std::unique_ptr<Evaluator> make_gpu_evaluator(const Problem& p, std::unique_ptr<Worker> w, const GpuEvaluatorOptions& o) {
  return std::make_unique<GpuEvaluator>(p, std::move(w), o);
}

}  // namespace evk::gi

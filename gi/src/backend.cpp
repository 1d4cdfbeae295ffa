// Population compilation (parallel NVRTC through the disk cache) and the real GPU evaluator.
#include <atomic>
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
  DeviceSummary device() override {
    DeviceSummary d = w_.device();
    cc_ = d.cc;
    return d;
  }
  CaseInfo set_case(std::uint64_t seed, bool holdout) override { return w_.set_case(seed, holdout); }
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
  const Problem& p_;
  Worker& w_;
  GpuEvaluatorOptions o_;
  std::atomic<int> cc_{0};
};
}  // namespace

std::unique_ptr<Evaluator> make_gpu_evaluator(const Problem& p, Worker& w, const GpuEvaluatorOptions& o) {
  return std::make_unique<GpuEvaluator>(p, w, o);
}

}  // namespace evk::gi

// Evaluating candidates: NVRTC compilation of a whole population in parallel threads, and runs in a
// worker process that owns the CUDA context (a crash, sticky error or hang kills and restarts it;
// the search goes on). The Evaluator interface lets the search run against a fake in CPU tests.
#pragma once
#include <cstdint>
#include <memory>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "evk/gi/genome.hpp"
#include "evk/gi/problem.hpp"

namespace evk::gi {

struct TimingSpec {
  int warmup = 1;         // after the checked run, which warms up too
  int repeats = 7;        // median of these (L2 flushed before each)
  bool flush_l2 = true;
  // Adaptive repeats: after min_repeats stop when (max - min) / median <= stop_spread (0: never) or
  // when every run so far took longer than give_up_ms (0: never; the search sets it well above the
  // parent limit, so a candidate that cannot become a parent is not timed to the last digit).
  int min_repeats = 7;
  double stop_spread = 0;
  double give_up_ms = 0;
  // Loop-guard deadline per evaluation (all launches of one Evaluation::launch), as a %globaltimer
  // budget in the engine's prelude (apply.cpp): a runaway loop ends itself and the wrong answer gets a
  // penalty instead of a watchdog kill. 0: none.
  double budget_ms = 0;
  // Launches after the timed ones, each from a poisoned output and checked (untimed): a rare race
  // (one pixel in a million, one launch in dozens) shows on more launches than the first and the
  // last. gi validate sets it; the search keeps the two checks.
  int race_checks = 0;
  // Energy (`gi run --objective energy|edp`, `gi validate` where the GPU has an energy counter):
  // after the timed runs and the checks, the candidate runs in a burst of back-to-back launches
  // (each from a poisoned output, no L2 flush, in steps of ~2 ms) from one change of the GPU's
  // energy counter until at least energy_window_ms and 2 more changes have passed (evk/energy.hpp);
  // RunResult::joules is per launch. Not for a wrong candidate or one that gave up.
  bool energy = false;
  double energy_window_ms = 200;
  // The most a burst may take (s), for watchdogs: it gives up with a note after this long.
  double energy_limit_s() const { return energy ? 2.0 + 10.0 * energy_window_ms / 1000.0 : 0.0; }
};

struct Compiled {
  bool ok = false;
  std::string log;          // compiler log (errors) or why it was not compiled
  std::vector<char> cubin;
  std::uint64_t code_hash = 0;  // phenotype tier 2: the compiled cubin
  double seconds = 0;
  bool cached = false;
};

struct RunResult {
  enum class Status { ok, launch_error, crash, hang, worker_error };
  Status status = Status::worker_error;
  double median_ms = 0, stdev_ms = 0, min_ms = 0, max_ms = 0;
  int repeats = 0;
  double ticks = 0;  // per-SM clock64() ticks of the last timed run: the longest span of any SM (0: not instrumented)
  int sms = 0;       // SMs that ran the kernel in that run
  Check check;
  std::string message;
  // Energy (TimingSpec::energy): joules per launch and the average power of the burst; 0 when not
  // measured, and then energy_note says why (no counter, a wrong candidate, the counter stuck).
  double joules = 0, watts = 0;
  long long energy_launches = 0;
  double energy_s = 0;  // between the burst's first and last counter change
  std::string energy_note;
  bool ok() const { return status == Status::ok; }
};
const char* status_name(RunResult::Status s);

struct DeviceSummary {
  std::string name;
  int cc = 0;
  int sm_count = 0;
  int clock_khz = 0;
  int index = 0;          // CUDA device index
  int count = 0;          // CUDA devices the worker could see
  std::string driver;     // NVIDIA driver version ("580.159.04"; the CUDA driver API version if unknown)
  std::string cuda;       // CUDA runtime version the tool was built with ("13.0")
};

struct CaseInfo {
  std::string describe;
  double work_items = 0;
  std::string size_class;
  Properties properties;  // the case as a request (Evaluation::properties)
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual DeviceSummary device() = 0;
  // Makes case (seed, holdout) of size class `size_class` current (on every lane).
  virtual CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) = 0;
  // Compile options for a config; throws InputError for an illegal combination.
  virtual std::vector<std::string> options(const Config& c) const = 0;
  virtual std::vector<Compiled> compile(const std::vector<Variant>& vs) = 0;
  // Compiles vs and hands each result to done(index, result) as soon as it is ready (any order, any
  // thread; done must be thread-safe), so a caller can run early candidates while later ones still
  // compile, with no barrier between groups. Default: compile() then done() in order.
  virtual void compile_stream(const std::vector<Variant>& vs, const std::function<void(std::size_t, Compiled&&)>& done) {
    auto r = compile(vs);
    for (std::size_t i = 0; i < r.size(); ++i) done(i, std::move(r[i]));
  }
  // Runs one compiled candidate on the current case. timeout_s: the watchdog for the whole request.
  virtual RunResult run(const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) = 0;
  virtual int restarts() const { return 0; }
  // Lanes: independent devices of one kind holding the same case (`gi run --devices`). run() is
  // lane 0; run_on(lane, ...) may be called from one thread per lane at the same time.
  virtual int lanes() const { return 1; }
  virtual RunResult run_on(int lane, const Compiled& c, const Config& cfg, const TimingSpec& t, double timeout_s) {
    (void)lane;
    return run(c, cfg, t, timeout_s);
  }
  virtual DeviceSummary lane_device(int lane) {
    (void)lane;
    return device();
  }
};

// One evaluator over several lanes (one per GPU): device() checks that every lane is the same kind
// of GPU (InputError naming them otherwise), set_case sets the case on all lanes in parallel,
// compile() and run() are lane 0's, run_on(i) is lanes[i]'s.
std::unique_ptr<Evaluator> make_lane_evaluator(std::vector<std::unique_ptr<Evaluator>> lanes);

// Parent-side handle of the worker process (fork + exec of `argv`, pipes on fds 3 and 4).
class Worker {
 public:
  struct Options {
    std::vector<std::string> argv;  // e.g. {"/proc/self/exe", "gi", "worker", "--device", "0"}
    std::string stderr_path;        // worker stderr goes here when set
    double startup_timeout_s = 120;
    int spares = 2;                 // initialised standby workers kept ready to take over at once after a
                                    // crash or hang (0: none); more than one absorbs bursts of crashes
    int keep_cases = 1;             // cases a worker keeps resident (most recent first), so that
                                    // minimize/tune can switch between a few cases without rebuilding them
  };
  explicit Worker(Options o);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  DeviceSummary device();
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class, double timeout_s = 600);
  RunResult run(const std::vector<char>& cubin, const std::string& entry, const Config& cfg, const TimingSpec& t,
                double timeout_s);
  int restarts() const { return restarts_; }
  void stop();

 private:
  struct Proc {
    int pid = -1, to = -1, from = -1;
    int pending_cases = 0;  // case requests sent, answers not read yet
  };
  void start();
  Proc spawn();
  void send_case(Proc& p);
  void end(Proc& p, bool kill_now = false);
  void reap(bool block);  // waits for killed workers (block: all of them)
  std::vector<int> zombies_;
  Options opt_;
  Proc cur_;
  std::deque<Proc> spares_;
  DeviceSummary dev_;
  bool have_case_ = false;
  std::uint64_t case_seed_ = 0;
  bool case_holdout_ = false;
  std::string case_class_;
  CaseInfo case_info_;
  int restarts_ = 0;
  int starts_ = 0;
};

// The worker's side: serves requests on in_fd/out_fd until EOF; returns the exit code.
int worker_main(const Problem& problem, int device, int in_fd = 3, int out_fd = 4);

struct GpuEvaluatorOptions {
  int compile_threads = 0;   // 0: hardware threads
  bool use_cache = true;
  std::string cache_dir;     // empty: evk::CompileCache::default_dir()
  bool ticks = false;        // compile candidates with the per-SM clock-tick scope (-DEVK_GI_TICKS=1)
  bool deadline = false;     // loop guards also check the worker's deadline (-DEVK_GI_DEADLINE=1)
};

// The real evaluator: NVRTC (+ disk cache) for the worker's device, runs in the worker.
std::unique_ptr<Evaluator> make_gpu_evaluator(const Problem& p, Worker& w, const GpuEvaluatorOptions& o = {});
// The same, owning its worker (stopped when the evaluator is destroyed).
std::unique_ptr<Evaluator> make_gpu_evaluator(const Problem& p, std::unique_ptr<Worker> w, const GpuEvaluatorOptions& o = {});

// Compiles requests in parallel threads (exposed for tests and the compile-rate statistics).
struct CompileRequest {
  std::string source;
  std::vector<std::string> options;
  bool options_ok = true;    // false: `log` says why (illegal config), not compiled
  std::string log;
};
// Compiles reqs on `threads` threads, taking them in index order from a shared counter. With `done`,
// each result is handed over (moved) as soon as it is ready and the returned entries are empty.
std::vector<Compiled> compile_parallel(const std::vector<CompileRequest>& reqs, int cc, bool want_cubin, int threads,
                                       const std::string& cache_dir, bool use_cache,
                                       const std::function<void(std::size_t, Compiled&&)>& done = {});

}  // namespace evk::gi

// The worker process: owns the CUDA context, loads each candidate cubin, poisons, runs, checks and
// times it. The parent (worker.cpp) talks to it over two pipes (frames: worker_io.cpp): JSON, then
// the cubin.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/energy.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gpu_timer.hpp"
#include "evk/stats.hpp"
#include "worker_io.hpp"

using nlohmann::json;

namespace evk::gi {

using wire::recv_frame;
using wire::send_frame;

#if defined(EVK_HAVE_CUDA)
namespace {
struct RawLibrary {  // the candidate's library; raw to reach its globals (evk_gi_sm_ticks)
  cudaLibrary_t h = nullptr;
  ~RawLibrary() {
    if (h) cudaLibraryUnload(h);
  }
};

// The NVIDIA driver version ("580.159.04") from /proc/driver/nvidia/version, else the CUDA driver
// API version ("CUDA 13.0").
std::string driver_version() {
  if (FILE* f = std::fopen("/proc/driver/nvidia/version", "r")) {
    char line[512] = {0};
    const bool got = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    if (got) {
      // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue ..." : the first token
      // made of digits and dots with at least one dot
      const std::string l = line;
      std::size_t i = 0;
      while (i < l.size()) {
        while (i < l.size() && l[i] == ' ') ++i;
        std::size_t j = i;
        while (j < l.size() && l[j] != ' ' && l[j] != '\n') ++j;
        const std::string tok = l.substr(i, j - i);
        if (!tok.empty() && tok.find('.') != std::string::npos &&
            tok.find_first_not_of("0123456789.") == std::string::npos)
          return tok;
        i = j + 1;
      }
    }
  }
  int v = 0;
  if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
    return "CUDA " + std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  return "";
}

// One case kept resident (Worker::Options::keep_cases).
struct Kept {
  std::string key;
  std::unique_ptr<Evaluation> eval;
};

// The worker's device state: its stream, events and L2 flusher, and the cases kept.
struct WorkerState {
  const Problem& problem;
  int device;
  Evaluation* eval = nullptr;  // the current case: kept.front()
  std::deque<Kept> kept;       // most recent first
  cudaStream_t stream = nullptr;
  std::unique_ptr<L2Flusher> flusher;
  cudaEvent_t ev_a = nullptr, ev_b = nullptr;
  // the GPU's energy counter, opened at the first request that measures energy
  bool meter_tried = false;
  std::unique_ptr<EnergyMeter> meter;
  std::string meter_why;
};

// One loaded candidate on the current case: its kernel, launch config and the prelude's deadline.
struct Candidate {
  Evaluation* eval = nullptr;
  cudaStream_t stream = nullptr;
  cudaKernel_t k = nullptr;
  cudaKernel_t stamp = nullptr;  // the engine's prelude (apply.cpp): absent in human sources
  unsigned long long budget_ns = 0;
  Config cfg;
  // starts the deadline (the prelude's stamp kernel), when there is one
  void start_clock() {
    if (stamp) {
      void* a[] = {&budget_ns};
      launch(stamp, dim3(1), dim3(256), a, 0, stream);
    }
  }
  // one evaluation's launches: the deadline covers them all
  void run_once() {
    start_clock();
    eval->launch(k, cfg, stream);
  }
};

// Per-SM clock ticks of the last timed run (the papers' timing).
struct Ticks {
  unsigned long long ticks = 0;  // longest span of any SM
  int sms = 0;
  long long warps = 0;
};

// Ends this process as soon as it is orphaned (its parent changes).
void worker_watch_parent() {
  // A worker outlives a search killed with SIGKILL while it is busy (building a case, running a
  // candidate) and only then reads the closed pipe; on the H100 one was still holding 649 MiB when the
  // resumed search had finished. A watchdog ends it as soon as it is orphaned (its parent changes).
  const pid_t parent = ::getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (::getppid() != parent) ::_exit(0);
    }
  }).detach();
}

// Sets up the device, stream, events and flusher and sends the hello (or the error); false on failure.
bool worker_hello(WorkerState& w, int out_fd) {
  const int device = w.device;
  try {
    EVK_CUDA(cudaSetDevice(device));
    EVK_CUDA(cudaFree(nullptr));
    EVK_CUDA(cudaStreamCreateWithFlags(&w.stream, cudaStreamNonBlocking));
    EVK_CUDA(cudaEventCreate(&w.ev_a));
    EVK_CUDA(cudaEventCreate(&w.ev_b));
    w.flusher = std::make_unique<L2Flusher>();
    cudaDeviceProp prop{};
    EVK_CUDA(cudaGetDeviceProperties(&prop, device));
    int clock = 0, count = 0, runtime = 0;
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, device);
    cudaGetDeviceCount(&count);
    cudaRuntimeGetVersion(&runtime);
    json hello{{"ok", true}, {"name", prop.name}, {"cc", prop.major * 10 + prop.minor},
               {"sm_count", prop.multiProcessorCount}, {"clock_khz", clock}, {"index", device},
               {"device_count", count}, {"driver", driver_version()},
               {"cuda", std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)}};
    send_frame(out_fd, hello.dump());
  } catch (const std::exception& e) {
    try {
      send_frame(out_fd, json{{"ok", false}, {"error", e.what()}}.dump());
    } catch (...) {
    }
    return false;
  }
  return true;
}

// The "case" op: makes (or takes from the kept ones) the case asked for and makes it current.
json worker_case(WorkerState& w, const json& req, bool& fatal) {
  json r;
  try {
    const std::uint64_t seed = req.value("seed", std::uint64_t{0});
    const bool holdout = req.value("holdout", false);
    const std::string cls = req.value("class", "");
    const std::size_t keep = static_cast<std::size_t>(std::max(1, req.value("keep", 1)));
    const std::string key = cls + "/" + std::to_string(seed) + (holdout ? "/h" : "/t");
    auto it = std::find_if(w.kept.begin(), w.kept.end(), [&](const Kept& k) { return k.key == key; });
    Kept cur;
    if (it != w.kept.end()) {
      cur = std::move(*it);
      w.kept.erase(it);
    }
    // free the cases beyond the limit (GPU memory) before making a new one
    while (w.kept.size() + 1 > keep) w.kept.pop_back();
    if (!cur.eval) {
      cur.key = key;
      cur.eval = cls.empty() ? w.problem.make_evaluation(seed, holdout) : w.problem.make_evaluation(seed, holdout, cls);
    }
    w.kept.push_front(std::move(cur));
    Evaluation* e = w.kept.front().eval.get();
    w.eval = e;
    r = {{"ok", true}, {"describe", e->describe()}, {"work_items", e->work_items()}, {"properties", e->properties()}};
  } catch (const std::exception& e) {
    w.eval = nullptr;
    w.kept.clear();
    r = {{"ok", false}, {"error", e.what()}};
    fatal = cudaDeviceSynchronize() != cudaSuccess;
  }
  return r;
}


// The warm-up launches, then the timed ones, each from a poisoned output; adaptive: stops after
// min_repeats when the spread is small or the candidate is clearly too slow. Wrong: one rough time.
std::vector<double> worker_time(WorkerState& w, Candidate& cand, const json& req, bool wrong) {
  int warm = req.value("warmup", 1), reps = req.value("repeats", 7);
  int min_reps = std::min(reps, req.value("min_repeats", reps));
  double stop_spread = req.value("stop_spread", 0.0), give_up_ms = req.value("give_up_ms", 0.0);
  if (wrong) {  // wrong answers: a rough time is enough
    warm = 0;
    reps = min_reps = 1;
  }
  bool flush = req.value("flush_l2", true);
  for (int i = 0; i < warm; ++i) cand.run_once();
  EVK_CUDA_LAST();
  EVK_CUDA(cudaStreamSynchronize(w.stream));
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    // Each timed launch starts from a poisoned output, like the checked one: a kernel that
    // skips work when the previous launch's answer is still there is timed doing the work.
    // Poison first, then flush, so the poisoned lines are not left in L2.
    w.eval->poison(w.stream);
    if (flush) w.flusher->flush(w.stream);
    cand.start_clock();
    EVK_CUDA(cudaEventRecord(w.ev_a, w.stream));
    w.eval->launch(cand.k, cand.cfg, w.stream);
    EVK_CUDA(cudaEventRecord(w.ev_b, w.stream));
    EVK_CUDA(cudaEventSynchronize(w.ev_b));
    EVK_CUDA_LAST();
    float t = 0;
    EVK_CUDA(cudaEventElapsedTime(&t, w.ev_a, w.ev_b));
    ms.push_back(t);
    // adaptive: stop after min_reps when the spread is small or the candidate is clearly too slow
    if (static_cast<int>(ms.size()) >= min_reps && static_cast<int>(ms.size()) < reps) {
      auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
      std::vector<double> sorted = ms;
      std::sort(sorted.begin(), sorted.end());
      double med = sorted[sorted.size() / 2];
      if (give_up_ms > 0 && *lo > give_up_ms) break;
      if (stop_spread > 0 && med > 0 && (*hi - *lo) / med <= stop_spread) break;
    }
  }
  return ms;
}

// Checks the last timed launch and the race_checks extra launches; the worst check goes into c.
void worker_recheck(WorkerState& w, Candidate& cand, const json& req, Check& c) {
  // The last timed launch's output is checked too: a kernel whose behaviour changes between
  // launches (undefined behaviour, state kept across launches) fails here even when its
  // first, checked launch was right. The worse of the two checks counts.
  if (c.penalty <= 0) {
    Check last = w.eval->check(w.stream);
    if (last.penalty > c.penalty) {
      last.summary = "the last timed launch differs from the checked one: " + last.summary;
      c = last;
    }
  }
  // race_checks: more launches after the timed ones, each from a poisoned output and checked (a
  // rare race shows on more launches); untimed, so the checks do not slow the timed launches
  const int race_checks = c.penalty > 0 ? 0 : std::max(0, req.value("race_checks", 0));
  for (int n = 0; n < race_checks; ++n) {
    w.eval->poison(w.stream);
    cand.run_once();
    Check k = w.eval->check(w.stream);
    if (k.penalty > c.penalty) {
      k.summary = "extra checked launch " + std::to_string(n + 1) + " of " + std::to_string(race_checks) +
                  " differs from the first: " + k.summary;
      c = k;
      break;
    }
  }
}

// The energy burst (TimingSpec::energy): back-to-back launches, each from a poisoned output (no L2
// flush: its traffic would count as the kernel's energy), in steps of ~2 ms so that a change of the
// counter is seen at most one step late; joules per launch and watts go into `out`, or a note why not.
void worker_energy(WorkerState& w, Candidate& cand, const json& req, double median_ms, json& out) {
  if (!w.meter_tried) {
    w.meter_tried = true;
    w.meter = open_energy_meter(w.device, w.meter_why);
  }
  if (!w.meter) {
    out["energy_note"] = w.meter_why;
    return;
  }
  const int per_step = std::clamp(static_cast<int>(2.0 / std::max(median_ms, 1e-3)), 1, 256);
  BurstOptions bo;
  bo.window_s = std::max(1.0, req.value("energy_window_ms", 200.0)) / 1000.0;
  const auto step = [&]() -> long long {
    for (int i = 0; i < per_step; ++i) {
      w.eval->poison(w.stream);
      cand.run_once();
    }
    EVK_CUDA_LAST();
    EVK_CUDA(cudaStreamSynchronize(w.stream));
    return per_step;
  };
  const BurstEnergy e = measure_burst(*w.meter, step, bo);
  if (!e.ok) {
    out["energy_note"] = e.why;
    return;
  }
  out["joules"] = e.joules_per_launch;
  out["watts"] = e.watts;
  out["energy_launches"] = e.launches;
  out["energy_s"] = e.seconds;
}

// Reads the prelude's per-SM clock ticks (start, end, warps per SM) of the last timed run.
Ticks worker_ticks(void* ticks_ptr, std::size_t ticks_bytes) {
  Ticks r;
  if (ticks_ptr && ticks_bytes >= 3 * sizeof(unsigned long long)) {
    std::vector<unsigned long long> t(ticks_bytes / sizeof(unsigned long long));
    EVK_CUDA(cudaMemcpy(t.data(), ticks_ptr, t.size() * sizeof(t[0]), cudaMemcpyDeviceToHost));
    for (std::size_t s = 0; s + 2 < t.size(); s += 3) {
      if (t[s + 2] == 0 || t[s + 1] < t[s]) continue;
      ++r.sms;
      r.warps += static_cast<long long>(t[s + 2]);
      r.ticks = std::max(r.ticks, t[s + 1] - t[s]);
    }
  }
  return r;
}

// Loads the candidate's cubin into lib, runs it once and checks it, times it, checks it again;
// returns the "run" op's answer. Throws on CUDA errors.
json worker_measure(WorkerState& w, const json& req, const std::string& cubin, RawLibrary& lib) {
  if (!w.eval) throw std::runtime_error("no case set");
  Candidate cand;
  cand.eval = w.eval;
  cand.stream = w.stream;
  cand.cfg = req.value("config", Config{});
  EVK_CUDA(cudaLibraryLoadData(&lib.h, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  EVK_CUDA(cudaLibraryGetKernel(&cand.k, lib.h, req.value("entry", "").c_str()));
  // the engine's prelude (apply.cpp): absent in human sources, then no deadline and no ticks
  if (cudaLibraryGetKernel(&cand.stamp, lib.h, "evk_gi_stamp") != cudaSuccess) cand.stamp = nullptr;
  void* ticks_ptr = nullptr;
  std::size_t ticks_bytes = 0;
  if (cudaLibraryGetGlobal(&ticks_ptr, &ticks_bytes, lib.h, "evk_gi_sm_ticks") != cudaSuccess) ticks_ptr = nullptr;
  cudaGetLastError();  // the look-ups above may leave a non-sticky error behind
  cand.budget_ns = static_cast<unsigned long long>(std::max(0.0, req.value("budget_ms", 0.0)) * 1e6);
  w.eval->poison(w.stream);
  cand.run_once();
  EVK_CUDA_LAST();
  Check c = w.eval->check(w.stream);
  std::vector<double> ms = worker_time(w, cand, req, c.penalty > 0);
  worker_recheck(w, cand, req, c);
  const Ticks tk = worker_ticks(ticks_ptr, ticks_bytes);
  TimingStats ts = summarize(ms);
  json out{{"status", "ok"}, {"median_ms", ts.median_ms}, {"stdev_ms", ts.stdev_ms}, {"min_ms", ts.min_ms},
           {"max_ms", ts.max_ms}, {"repeats", ts.repeats}, {"penalty", c.penalty}, {"max_error", c.max_error},
           {"bad_fraction", c.bad_fraction}, {"summary", c.summary}, {"ticks", tk.ticks}, {"sms", tk.sms},
           {"warps", tk.warps}};
  if (req.value("energy", false)) {  // after the timed runs and every check, which it does not change
    const double give_up_ms = req.value("give_up_ms", 0.0);
    if (c.penalty > 0) out["energy_note"] = "not measured: wrong answer";
    else if (give_up_ms > 0 && ts.min_ms > give_up_ms) out["energy_note"] = "not measured: too slow to be a parent";
    else worker_energy(w, cand, req, ts.median_ms, out);
  }
  return out;
}

// The "run" op: measures one candidate; a CUDA error answers launch_error, or crash when it is sticky.
json worker_run(WorkerState& w, const json& req, const std::string& cubin, bool& fatal) {
  json r;
  RawLibrary lib;
  try {
    r = worker_measure(w, req, cubin, lib);
  } catch (const std::exception& e) {
    // sticky errors leave the context unusable: report and exit so the parent restarts us
    fatal = cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess;
    r = {{"status", fatal ? "crash" : "launch_error"}, {"message", e.what()}, {"fatal", fatal}};
  }
  if (fatal) lib.h = nullptr;  // unloading in a broken context can hang; the process exits
  return r;
}
}  // namespace

int worker_main(const Problem& problem, int device, int in_fd, int out_fd) {
  ::signal(SIGPIPE, SIG_IGN);
  worker_watch_parent();
  WorkerState w{problem, device};
  if (!worker_hello(w, out_fd)) return 1;
  for (;;) {
    json req;
    std::string cubin;
    try {
      req = json::parse(recv_frame(in_fd, -1));
      if (req.value("op", "") == "run") cubin = recv_frame(in_fd, -1);
    } catch (...) {
      return 0;  // parent closed the pipe
    }
    json r;
    bool fatal = false;
    if (req.value("op", "") == "case") {
      r = worker_case(w, req, fatal);
    } else if (req.value("op", "") == "run") {
      r = worker_run(w, req, cubin, fatal);
    } else {
      r = {{"ok", false}, {"error", "unknown op"}};
    }
    try {
      send_frame(out_fd, r.dump());
    } catch (...) {
      return 0;
    }
    if (fatal) return 3;
  }
}
#else
int worker_main(const Problem&, int, int, int out_fd) {
  send_frame(out_fd, json{{"ok", false}, {"error", "built without CUDA"}}.dump());
  return 1;
}
#endif

}  // namespace evk::gi

// The worker process: owns the CUDA context, loads each candidate cubin, poisons, runs, checks and
// times it. The parent talks to it over two pipes (length-prefixed frames: JSON, then the cubin).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "evk/cuda_check.hpp"
#include "evk/cuda_library.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gpu_timer.hpp"
#include "evk/stats.hpp"

using nlohmann::json;

namespace evk::gi {

const char* status_name(RunResult::Status s) {
  switch (s) {
    case RunResult::Status::ok: return "ok";
    case RunResult::Status::launch_error: return "launch_error";
    case RunResult::Status::crash: return "crash";
    case RunResult::Status::hang: return "hang";
    case RunResult::Status::worker_error: return "worker_error";
  }
  return "?";
}

namespace {
struct Timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Closed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
#if defined(EVK_HAVE_CUDA)
struct RawLibrary {  // the candidate's library; raw to reach its globals (evk_gi_sm_ticks)
  cudaLibrary_t h = nullptr;
  ~RawLibrary() {
    if (h) cudaLibraryUnload(h);
  }
};
#endif

void write_all(int fd, const void* p, std::size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Closed("worker pipe closed");
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

// deadline < 0: wait forever
void read_all(int fd, void* p, std::size_t n, double deadline_s) {
  auto* c = static_cast<char*>(p);
  auto t0 = std::chrono::steady_clock::now();
  while (n > 0) {
    if (deadline_s >= 0) {
      double left = deadline_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (left <= 0) throw Timeout("timeout");
      pollfd pf{fd, POLLIN, 0};
      int r = ::poll(&pf, 1, static_cast<int>(std::ceil(left * 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) throw Timeout("timeout");
    }
    ssize_t got = ::read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw Closed("worker pipe closed");
    c += got;
    n -= static_cast<std::size_t>(got);
  }
}

void send_frame(int fd, const std::string& s) {
  std::uint64_t n = s.size();
  write_all(fd, &n, sizeof n);
  write_all(fd, s.data(), s.size());
}
void send_frame(int fd, const std::vector<char>& s) {
  std::uint64_t n = s.size();
  write_all(fd, &n, sizeof n);
  write_all(fd, s.data(), s.size());
}
std::string recv_frame(int fd, double timeout_s) {
  auto t0 = std::chrono::steady_clock::now();
  std::uint64_t n = 0;
  read_all(fd, &n, sizeof n, timeout_s);
  if (n > (1ull << 32)) throw Closed("corrupt frame");
  std::string s(n, '\0');
  double left = timeout_s < 0 ? -1 : timeout_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timeout_s >= 0 && left <= 0) left = 0.001;
  read_all(fd, s.data(), n, left);
  return s;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// parent side

Worker::Worker(Options o) : opt_(std::move(o)) { ::signal(SIGPIPE, SIG_IGN); }
Worker::~Worker() { stop(); }

void Worker::reap(bool block) {
  std::vector<int> left;
  for (int pid : zombies_) {
    int st = 0;
    if (::waitpid(pid, &st, block ? 0 : WNOHANG) == 0) left.push_back(pid);
  }
  zombies_ = left;
}

void Worker::end(Proc& p, bool kill_now) {
  if (p.pid > 0 && kill_now) {  // hung: the driver's context teardown runs while we go on
    ::close(p.to);
    ::close(p.from);
    ::kill(p.pid, SIGKILL);
    zombies_.push_back(p.pid);
    p = Proc{};
    return;
  }
  if (p.pid > 0) {
    ::close(p.to);
    ::close(p.from);
    bool gone = false;
    for (int i = 0; i < 20 && !gone; ++i) {  // a healthy worker exits on EOF
      int st = 0;
      gone = ::waitpid(p.pid, &st, WNOHANG) == p.pid;
      if (!gone) ::usleep(5000);
    }
    if (!gone) {
      ::kill(p.pid, SIGKILL);
      ::waitpid(p.pid, nullptr, 0);
    }
  }
  p = Proc{};
}

void Worker::stop() {
  end(cur_);
  for (auto& p : spares_) end(p);
  spares_.clear();
  reap(true);
}

Worker::Proc Worker::spawn() {
  if (opt_.argv.empty()) throw std::runtime_error("gi worker: no command to start");
  int a[2], b[2];  // a: parent -> worker, b: worker -> parent
  if (::pipe2(a, O_CLOEXEC) != 0) throw std::runtime_error("gi worker: pipe failed");
  if (::pipe2(b, O_CLOEXEC) != 0) {
    ::close(a[0]);
    ::close(a[1]);
    throw std::runtime_error("gi worker: pipe failed");
  }
  std::vector<char*> argv;
  for (auto& x : opt_.argv) argv.push_back(const_cast<char*>(x.c_str()));
  argv.push_back(nullptr);
  int pid = ::fork();
  if (pid < 0) throw std::runtime_error("gi worker: fork failed");
  if (pid == 0) {
    int in = ::fcntl(a[0], F_DUPFD, 100), out = ::fcntl(b[1], F_DUPFD, 100);
    ::dup2(in, 3);
    ::dup2(out, 4);
    if (!opt_.stderr_path.empty()) {
      int e = ::open(opt_.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (e >= 0) ::dup2(e, 2);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(a[0]);
  ::close(b[1]);
  Proc p;
  p.pid = pid;
  p.to = a[1];
  p.from = b[0];
  if (have_case_) send_case(p);
  return p;
}

void Worker::send_case(Proc& p) {
  json req{{"op", "case"}, {"seed", case_seed_}, {"holdout", case_holdout_}, {"class", case_class_},
           {"keep", opt_.keep_cases}};
  send_frame(p.to, req.dump());
  ++p.pending_cases;
}

void Worker::start() {
  end(cur_);
  Proc p;  // a warm standby takes over at once
  if (!spares_.empty()) {
    p = spares_.front();
    spares_.pop_front();
  } else {
    p = spawn();
  }
  ++starts_;
  if (starts_ > 1) ++restarts_;
  try {
    json hello = json::parse(recv_frame(p.from, opt_.startup_timeout_s));
    if (!hello.value("ok", false)) throw std::runtime_error("gi worker failed to start: " + hello.value("error", "unknown"));
    dev_.name = hello.value("name", "");
    dev_.cc = hello.value("cc", 0);
    dev_.sm_count = hello.value("sm_count", 0);
    dev_.clock_khz = hello.value("clock_khz", 0);
    dev_.index = hello.value("index", 0);
    dev_.count = hello.value("device_count", 0);
    dev_.driver = hello.value("driver", "");
    dev_.cuda = hello.value("cuda", "");
    for (; p.pending_cases > 0; --p.pending_cases) {
      json r = json::parse(recv_frame(p.from, 600));
      if (p.pending_cases == 1 && !r.value("ok", false))
        throw std::runtime_error("gi worker: making case " + std::to_string(case_seed_) + " failed: " + r.value("error", ""));
    }
  } catch (const Timeout&) {
    end(p);
    throw std::runtime_error("gi worker did not start within " + std::to_string(opt_.startup_timeout_s) + " s");
  } catch (const Closed&) {
    end(p);
    throw std::runtime_error("gi worker exited while starting (see its stderr)");
  } catch (...) {
    end(p);
    throw;
  }
  cur_ = p;
  while (static_cast<int>(spares_.size()) < opt_.spares) {
    try {
      spares_.push_back(spawn());
    } catch (const std::exception&) {
      break;
    }
  }
}

DeviceSummary Worker::device() {
  if (cur_.pid <= 0) start();
  return dev_;
}

CaseInfo Worker::set_case(std::uint64_t seed, bool holdout, const std::string& size_class, double timeout_s) {
  if (cur_.pid <= 0) start();
  have_case_ = true;
  case_seed_ = seed;
  case_holdout_ = holdout;
  case_class_ = size_class;
  try {
    send_case(cur_);
    json r = json::parse(recv_frame(cur_.from, timeout_s));
    cur_.pending_cases = 0;
    if (!r.value("ok", false)) throw std::runtime_error("gi worker: making case " + std::to_string(seed) + " failed: " + r.value("error", ""));
    case_info_ = {r.value("describe", ""), r.value("work_items", 0.0), size_class,
                  r.value("properties", Properties{})};
  } catch (const Timeout&) {
    stop();
    throw std::runtime_error("gi worker: making case " + std::to_string(seed) + " timed out");
  } catch (const Closed&) {
    stop();
    throw std::runtime_error("gi worker died while making case " + std::to_string(seed));
  }
  for (auto it = spares_.begin(); it != spares_.end();) {
    try {
      send_case(*it);
      ++it;
    } catch (const std::exception&) {
      end(*it, true);
      it = spares_.erase(it);
    }
  }
  return case_info_;
}

RunResult Worker::run(const std::vector<char>& cubin, const std::string& entry, const Config& cfg, const TimingSpec& t,
                      double timeout_s) {
  RunResult res;
  json req{{"op", "run"},          {"entry", entry},           {"config", cfg},
           {"warmup", t.warmup},    {"repeats", t.repeats},     {"flush_l2", t.flush_l2},
           {"min_repeats", t.min_repeats}, {"stop_spread", t.stop_spread}, {"give_up_ms", t.give_up_ms},
           {"budget_ms", t.budget_ms}, {"race_checks", t.race_checks}};
  reap(false);
  try {
    if (cur_.pid <= 0) start();
    send_frame(cur_.to, req.dump());
    send_frame(cur_.to, cubin);
    json r = json::parse(recv_frame(cur_.from, timeout_s));
    std::string st = r.value("status", "worker_error");
    res.status = st == "ok" ? RunResult::Status::ok
                 : st == "launch_error" ? RunResult::Status::launch_error
                 : st == "crash" ? RunResult::Status::crash
                                 : RunResult::Status::worker_error;
    res.message = r.value("message", "");
    res.median_ms = r.value("median_ms", 0.0);
    res.stdev_ms = r.value("stdev_ms", 0.0);
    res.min_ms = r.value("min_ms", 0.0);
    res.max_ms = r.value("max_ms", 0.0);
    res.repeats = r.value("repeats", 0);
    res.ticks = r.value("ticks", 0.0);
    res.sms = r.value("sms", 0);
    res.check.penalty = r.value("penalty", 0.0);
    res.check.max_error = r.value("max_error", 0.0);
    res.check.bad_fraction = r.value("bad_fraction", 0.0);
    res.check.summary = r.value("summary", "");
    if (r.value("fatal", false)) end(cur_);  // the context is gone; the standby takes over
  } catch (const Timeout&) {
    end(cur_, true);
    res.status = RunResult::Status::hang;
    res.message = "no answer within " + std::to_string(timeout_s) + " s: worker killed";
  } catch (const Closed&) {
    end(cur_);
    res.status = RunResult::Status::crash;
    res.message = "worker process died";
  } catch (const std::exception& e) {
    end(cur_);
    res.status = RunResult::Status::worker_error;
    res.message = e.what();
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// worker side

#if defined(EVK_HAVE_CUDA)
namespace {
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
}  // namespace

int worker_main(const Problem& problem, int device, int in_fd, int out_fd) {
  ::signal(SIGPIPE, SIG_IGN);
  // A worker outlives a search killed with SIGKILL while it is busy (building a case, running a
  // candidate) and only then reads the closed pipe; on the H100 one was still holding 649 MiB when the
  // resumed search had finished. A watchdog ends it as soon as it is orphaned (its parent changes).
  {
    const pid_t parent = ::getppid();
    std::thread([parent] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (::getppid() != parent) ::_exit(0);
      }
    }).detach();
  }
  Evaluation* eval = nullptr;  // the current case: kept.front()
  // cases kept resident (Worker::Options::keep_cases), most recent first; `eval` is the current one
  struct Kept {
    std::string key;
    std::unique_ptr<Evaluation> eval;
  };
  std::deque<Kept> kept;
  cudaStream_t stream = nullptr;
  std::unique_ptr<L2Flusher> flusher;
  cudaEvent_t ev_a = nullptr, ev_b = nullptr;
  try {
    EVK_CUDA(cudaSetDevice(device));
    EVK_CUDA(cudaFree(nullptr));
    EVK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    EVK_CUDA(cudaEventCreate(&ev_a));
    EVK_CUDA(cudaEventCreate(&ev_b));
    flusher = std::make_unique<L2Flusher>();
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
    return 1;
  }
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
      try {
        const std::uint64_t seed = req.value("seed", std::uint64_t{0});
        const bool holdout = req.value("holdout", false);
        const std::string cls = req.value("class", "");
        const std::size_t keep = static_cast<std::size_t>(std::max(1, req.value("keep", 1)));
        const std::string key = cls + "/" + std::to_string(seed) + (holdout ? "/h" : "/t");
        auto it = std::find_if(kept.begin(), kept.end(), [&](const Kept& k) { return k.key == key; });
        Kept cur;
        if (it != kept.end()) {
          cur = std::move(*it);
          kept.erase(it);
        }
        // free the cases beyond the limit (GPU memory) before making a new one
        while (kept.size() + 1 > keep) kept.pop_back();
        if (!cur.eval) {
          cur.key = key;
          cur.eval = cls.empty() ? problem.make_evaluation(seed, holdout) : problem.make_evaluation(seed, holdout, cls);
        }
        kept.push_front(std::move(cur));
        Evaluation* e = kept.front().eval.get();
        eval = e;
        r = {{"ok", true}, {"describe", e->describe()}, {"work_items", e->work_items()}, {"properties", e->properties()}};
      } catch (const std::exception& e) {
        eval = nullptr;
        kept.clear();
        r = {{"ok", false}, {"error", e.what()}};
        fatal = cudaDeviceSynchronize() != cudaSuccess;
      }
    } else if (req.value("op", "") == "run") {
      RawLibrary lib;
      try {
        if (!eval) throw std::runtime_error("no case set");
        Config cfg = req.value("config", Config{});
        EVK_CUDA(cudaLibraryLoadData(&lib.h, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
        cudaKernel_t k = nullptr;
        EVK_CUDA(cudaLibraryGetKernel(&k, lib.h, req.value("entry", "").c_str()));
        // the engine's prelude (apply.cpp): absent in human sources, then no deadline and no ticks
        cudaKernel_t stamp = nullptr;
        if (cudaLibraryGetKernel(&stamp, lib.h, "evk_gi_stamp") != cudaSuccess) stamp = nullptr;
        void* ticks_ptr = nullptr;
        std::size_t ticks_bytes = 0;
        if (cudaLibraryGetGlobal(&ticks_ptr, &ticks_bytes, lib.h, "evk_gi_sm_ticks") != cudaSuccess) ticks_ptr = nullptr;
        cudaGetLastError();  // the look-ups above may leave a non-sticky error behind
        unsigned long long budget_ns = static_cast<unsigned long long>(std::max(0.0, req.value("budget_ms", 0.0)) * 1e6);
        auto run_once = [&] {  // the deadline covers all launches of one evaluation
          if (stamp) {
            void* a[] = {&budget_ns};
            launch(stamp, dim3(1), dim3(256), a, 0, stream);
          }
          eval->launch(k, cfg, stream);
        };
        eval->poison(stream);
        run_once();
        EVK_CUDA_LAST();
        Check c = eval->check(stream);
        int warm = req.value("warmup", 1), reps = req.value("repeats", 7);
        int min_reps = std::min(reps, req.value("min_repeats", reps));
        double stop_spread = req.value("stop_spread", 0.0), give_up_ms = req.value("give_up_ms", 0.0);
        if (c.penalty > 0) {  // wrong answers: a rough time is enough
          warm = 0;
          reps = min_reps = 1;
        }
        bool flush = req.value("flush_l2", true);
        for (int i = 0; i < warm; ++i) run_once();
        EVK_CUDA_LAST();
        EVK_CUDA(cudaStreamSynchronize(stream));
        std::vector<double> ms;
        for (int i = 0; i < reps; ++i) {
          // Each timed launch starts from a poisoned output, like the checked one: a kernel that
          // skips work when the previous launch's answer is still there is timed doing the work.
          // Poison first, then flush, so the poisoned lines are not left in L2.
          eval->poison(stream);
          if (flush) flusher->flush(stream);
          if (stamp) {
            void* a[] = {&budget_ns};
            launch(stamp, dim3(1), dim3(256), a, 0, stream);
          }
          EVK_CUDA(cudaEventRecord(ev_a, stream));
          eval->launch(k, cfg, stream);
          EVK_CUDA(cudaEventRecord(ev_b, stream));
          EVK_CUDA(cudaEventSynchronize(ev_b));
          EVK_CUDA_LAST();
          float t = 0;
          EVK_CUDA(cudaEventElapsedTime(&t, ev_a, ev_b));
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
        // The last timed launch's output is checked too: a kernel whose behaviour changes between
        // launches (undefined behaviour, state kept across launches) fails here even when its
        // first, checked launch was right. The worse of the two checks counts.
        if (c.penalty <= 0) {
          Check last = eval->check(stream);
          if (last.penalty > c.penalty) {
            last.summary = "the last timed launch differs from the checked one: " + last.summary;
            c = last;
          }
        }
        // race_checks: more launches after the timed ones, each from a poisoned output and checked (a
        // rare race shows on more launches); untimed, so the checks do not slow the timed launches
        const int race_checks = c.penalty > 0 ? 0 : std::max(0, req.value("race_checks", 0));
        for (int n = 0; n < race_checks; ++n) {
          eval->poison(stream);
          run_once();
          Check k = eval->check(stream);
          if (k.penalty > c.penalty) {
            k.summary = "extra checked launch " + std::to_string(n + 1) + " of " + std::to_string(race_checks) +
                        " differs from the first: " + k.summary;
            c = k;
            break;
          }
        }
        // per-SM clock ticks of the last timed run (the papers' timing): longest span of any SM
        unsigned long long ticks = 0;
        int sms = 0;
        long long warps = 0;
        if (ticks_ptr && ticks_bytes >= 3 * sizeof(unsigned long long)) {
          std::vector<unsigned long long> t(ticks_bytes / sizeof(unsigned long long));
          EVK_CUDA(cudaMemcpy(t.data(), ticks_ptr, t.size() * sizeof(t[0]), cudaMemcpyDeviceToHost));
          for (std::size_t s = 0; s + 2 < t.size(); s += 3) {
            if (t[s + 2] == 0 || t[s + 1] < t[s]) continue;
            ++sms;
            warps += static_cast<long long>(t[s + 2]);
            ticks = std::max(ticks, t[s + 1] - t[s]);
          }
        }
        TimingStats ts = summarize(ms);
        r = {{"status", "ok"}, {"median_ms", ts.median_ms}, {"stdev_ms", ts.stdev_ms}, {"min_ms", ts.min_ms},
             {"max_ms", ts.max_ms}, {"repeats", ts.repeats}, {"penalty", c.penalty}, {"max_error", c.max_error},
             {"bad_fraction", c.bad_fraction}, {"summary", c.summary}, {"ticks", ticks}, {"sms", sms},
             {"warps", warps}};
      } catch (const std::exception& e) {
        // sticky errors leave the context unusable: report and exit so the parent restarts us
        fatal = cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess;
        r = {{"status", fatal ? "crash" : "launch_error"}, {"message", e.what()}, {"fatal", fatal}};
      }
      if (fatal) lib.h = nullptr;  // unloading in a broken context can hang; the process exits
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

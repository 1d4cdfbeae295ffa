// The parent side of the worker process: starts it (and warm standbys), sets the case, sends each
// candidate cubin and reads its result. The worker side is worker_main.cpp; the framing worker_io.cpp.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "evk/gi/evaluate.hpp"
#include "worker_io.hpp"

using nlohmann::json;

namespace evk::gi {

using wire::Closed;
using wire::recv_frame;
using wire::send_frame;
using wire::Timeout;

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
  if (t.energy) {
    req["energy"] = true;
    req["energy_window_ms"] = t.energy_window_ms;
  }
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
    res.joules = r.value("joules", 0.0);
    res.watts = r.value("watts", 0.0);
    res.energy_launches = r.value("energy_launches", 0LL);
    res.energy_s = r.value("energy_s", 0.0);
    res.energy_note = r.value("energy_note", "");
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

}  // namespace evk::gi

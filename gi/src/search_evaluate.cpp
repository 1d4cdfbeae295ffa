// Evaluating a generation: NVRTC threads compile the whole round in the background while this
// thread takes each candidate in order as soon as it is compiled (tabu checks, replacements) and
// hands it to the lane runners: one thread per lane (GPU) runs candidates in the order handed over.
// Tier-2 duplicates found after compiling are replaced and go through another round. Each
// candidate's time is put on lane 0's scale through the reference re-timed on its own lane, so
// selection compares candidates timed on different GPUs fairly.
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <future>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>

#include "search_engine.hpp"

namespace evk::gi::detail {

namespace {
// A time on lane 0's scale, rounded to 10 significant digits (CUDA-event times have ~7), so that
// equal times stay equal whichever lane measured them and selection does not depend on the lanes.
double lane_scale(double ms, double factor) {
  const double v = ms * factor;
  if (!(v > 0) || !std::isfinite(v)) return v;
  const double mag = std::pow(10.0, 9 - std::floor(std::log10(v)));
  return std::round(v * mag) / mag;
}

// One thread per lane; each runs the candidates handed over (dispatch) in order.
class LaneRunners {
 public:
  LaneRunners(int lanes, std::function<void(std::size_t, int)> run) : run_(std::move(run)) {
    run_s_.assign(static_cast<std::size_t>(lanes), 0.0);
    for (int lane = 0; lane < lanes; ++lane) threads_.emplace_back([this, lane] { loop(lane); });
  }
  ~LaneRunners() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
      queue_.clear();
    }
    work_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void dispatch(std::size_t i) {
    {
      std::lock_guard<std::mutex> lk(m_);
      queue_.push_back(i);
    }
    work_.notify_one();
  }
  void drain() {  // until every candidate handed over has run
    std::unique_lock<std::mutex> lk(m_);
    idle_.wait(lk, [&] { return queue_.empty() && busy_ == 0; });
  }
  double run_s() {  // seconds spent running, summed over the lanes
    std::lock_guard<std::mutex> lk(m_);
    double s = 0;
    for (double r : run_s_) s += r;
    return s;
  }

 private:
  void loop(int lane) {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lk(m_);
        work_.wait(lk, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        i = queue_.front();
        queue_.pop_front();
        ++busy_;
      }
      const auto t = Clock::now();
      run_(i, lane);
      {
        std::lock_guard<std::mutex> lk(m_);
        run_s_[static_cast<std::size_t>(lane)] += since(t);
        --busy_;
      }
      idle_.notify_all();
    }
  }

  std::function<void(std::size_t, int)> run_;
  std::mutex m_;
  std::condition_variable work_, idle_;
  std::deque<std::size_t> queue_;
  int busy_ = 0;
  bool stop_ = false;
  std::vector<double> run_s_;
  std::vector<std::thread> threads_;
};
}  // namespace

struct Search::Batch {
  std::vector<Individual> pop;
  std::vector<Variant> vars;
  std::vector<Compiled> comp;
  // per lane: the reference's time and joules, the watchdog limit (s), the timing of candidates
  std::vector<double> lane_ref, lane_ref_j, limit;
  std::vector<TimingSpec> lane_ts;
  LaneRunners* runners = nullptr;
};

std::vector<Individual> Search::evaluate(std::vector<Genome>& kids, GenerationStats& st) {
  const std::size_t n = kids.size();
  Batch b;
  b.pop.resize(n);
  b.vars.resize(n);
  b.comp.resize(n);
  std::vector<std::size_t> pending(n);
  std::iota(pending.begin(), pending.end(), std::size_t{0});
  const int lanes = std::max(1, ev_.lanes());
  b.lane_ref.assign(static_cast<std::size_t>(lanes), st.ref_ms);
  b.limit.resize(b.lane_ref.size());
  b.lane_ts.assign(b.lane_ref.size(), o_.timing);
  b.lane_ref_j.assign(b.lane_ref.size(), st.ref_j);
  for (std::size_t l = 0; l < b.lane_ref.size(); ++l) {
    if (l < st.lane_ref_ms.size() && st.lane_ref_ms[l] > 0) b.lane_ref[l] = st.lane_ref_ms[l];
    if (l < st.lane_ref_j.size() && st.lane_ref_j[l] > 0) b.lane_ref_j[l] = st.lane_ref_j[l];
    const double ref = b.lane_ref[l];
    b.limit[l] = o_.watchdog_min_s + o_.watchdog_factor * (1 + o_.timing.warmup + o_.timing.repeats) * ref / 1000.0;
    if (o_.timing.energy) b.limit[l] += 1.5 * o_.timing.energy_limit_s();  // the energy burst gives up by then
    TimingSpec& ts = b.lane_ts[l];
    ts.min_repeats = std::max(1, std::min(o_.min_repeats, ts.repeats));
    ts.stop_spread = o_.stop_spread;
    ts.give_up_ms = o_.give_up_factor > 0 ? o_.give_up_factor * ref * (1 + o_.tolerance) : 0;
    ts.budget_ms = std::max(o_.deadline_min_ms, o_.deadline_factor * ref);
  }
  LaneRunners runners(lanes, [&](std::size_t i, int lane) {
    try {
      run_candidate(b, i, lane, st.ref_ms);
    } catch (const std::exception& e) {
      b.pop[i].status = "worker_error";
      b.pop[i].summary = e.what();
    }
  });
  b.runners = &runners;
  for (int round = 0; !pending.empty(); ++round) {
    const std::vector<std::size_t> to_compile = phenotype_round(b, kids, pending, st);
    pending = compile_round(b, kids, to_compile, round >= o_.tabu_rounds, st);
  }
  st.run_s += runners.run_s();
  for (std::size_t i = 0; i < n; ++i) {
    b.pop[i].genome = kids[i];
    b.pop[i].text = format_genome(g_, kids[i]);
  }
  return std::move(b.pop);
}

void Search::run_candidate(Batch& b, std::size_t i, int lane, double ref_ms) {
  const auto l = static_cast<std::size_t>(lane);
  RunResult r = ev_.run_on(lane, b.comp[i], b.vars[i].config, b.lane_ts[l], b.limit[l]);
  Individual& ind = b.pop[i];
  ind.lane = lane;
  ind.status = status_name(r.status);
  if (!r.ok()) {
    ind.summary = r.message;
    return;
  }
  ind.raw_ms = r.median_ms;
  ind.time_ms = lane_scale(r.median_ms, lane == 0 ? 1.0 : ref_ms / b.lane_ref[l]);
  ind.ticks = r.ticks;
  ind.sms = r.sms;
  ind.penalty = r.check.penalty;
  ind.summary = r.check.summary;
  if (o_.objective == Objective::time) {
    ind.fitness = ind.time_ms + r.check.penalty;
    return;
  }
  // energy and edp: joules on lane 0's scale too (through the reference's joules on each lane)
  ind.raw_j = r.joules;
  ind.joules = lane_scale(r.joules, lane == 0 || !(b.lane_ref_j[l] > 0) ? 1.0 : b.lane_ref_j[0] / b.lane_ref_j[l]);
  ind.watts = r.watts;
  if (r.check.penalty > 0) {
    ind.fitness = objective_value(o_.objective, ind.time_ms, ind.joules) + r.check.penalty;
  } else if (ind.joules > 0) {
    ind.fitness = objective_value(o_.objective, ind.time_ms, ind.joules);
  } else if (b.lane_ts[l].give_up_ms > 0 && r.min_ms > b.lane_ts[l].give_up_ms) {
    ind.fitness = std::numeric_limits<double>::infinity();  // correct, too slow to be a parent: not measured
  } else {  // a candidate that may be a parent has no energy: it cannot be ranked
    ind.status = "no_energy";
    ind.fitness = std::numeric_limits<double>::infinity();
    ind.summary = r.energy_note;
  }
}

// Tier 1 (preprocessed source + options + config): a child whose phenotype was seen is replaced by
// a fresh one (a few tries); returns the children to compile, in order.
std::vector<std::size_t> Search::phenotype_round(Batch& b, std::vector<Genome>& kids,
                                                 const std::vector<std::size_t>& pending, GenerationStats& st) {
  std::vector<std::size_t> to_compile;
  for (std::size_t i : pending) {
    for (int t = 0;; ++t) {
      b.vars[i] = apply(g_, kids[i]);
      std::vector<std::string> opts;
      try {
        opts = ev_.options(b.vars[i].config);
      } catch (const std::exception& e) {
        b.pop[i].status = "illegal_config";
        b.pop[i].summary = e.what();
        break;
      }
      opts.insert(opts.end(), b.vars[i].options.begin(), b.vars[i].options.end());
      auto h = phenotype_hash(b.vars[i], opts);
      if (!s_.tabu_phenotype.count(h) || t >= o_.tabu_rounds * 4) {
        s_.tabu_phenotype.insert(h);
        to_compile.push_back(i);
        break;
      }
      ++st.tabu_phenotype;
      std::vector<Genome> one;
      if (!fresh_into(one, st, 100)) {
        to_compile.push_back(i);
        break;
      }
      kids[i] = one[0];
    }
  }
  return to_compile;
}

// All of the round's candidates go to the compile threads at once (in order, no barrier between
// groups); this thread hands each one to the lane runners as soon as it and those before it are
// compiled, so the GPUs work while NVRTC compiles the rest and no compile thread waits for a group.
// Tier 2 (compiled code + config): a duplicate is replaced (unless `last`) and returned to go
// through another round.
std::vector<std::size_t> Search::compile_round(Batch& b, std::vector<Genome>& kids, const std::vector<std::size_t>& to_compile,
                                               bool last, GenerationStats& st) {
  std::vector<Variant> batch;
  for (std::size_t i : to_compile) batch.push_back(b.vars[i]);
  std::vector<char> ready(to_compile.size(), 0);
  std::mutex mu;
  std::condition_variable cv;
  bool compile_over = false;
  auto finish = [&] {
    {
      std::lock_guard<std::mutex> lk(mu);
      compile_over = true;
    }
    cv.notify_all();
  };
  auto compiling = std::async(std::launch::async, [&] {
    const auto t = Clock::now();
    try {
      ev_.compile_stream(batch, [&](std::size_t k, Compiled&& c) {
        {
          std::lock_guard<std::mutex> lk(mu);
          b.comp[to_compile[k]] = std::move(c);
          ready[k] = 1;
        }
        cv.notify_all();
      });
    } catch (...) {
      finish();
      throw;
    }
    finish();
    return since(t);
  });
  std::vector<std::size_t> again;
  for (std::size_t k = 0; k < to_compile.size(); ++k) {
    const auto tw = Clock::now();
    bool have = false;
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return ready[k] || compile_over; });
      have = ready[k];
    }
    st.compile_wait_s += since(tw);
    if (!have) break;  // the compile failed as a whole: compiling.get() below rethrows
    std::size_t i = to_compile[k];
    st.compile_cpu_s += b.comp[i].seconds;
    if (!b.comp[i].ok) {
      b.pop[i].status = "compile_error";
      b.pop[i].summary = b.comp[i].log.substr(0, 2000);
      continue;
    }
    auto h = b.comp[i].code_hash ^ config_hash(b.vars[i].config);
    if (s_.tabu_code.count(h) && !last) {
      ++st.tabu_code;
      std::vector<Genome> one;
      if (fresh_into(one, st, 100)) {
        kids[i] = one[0];
        again.push_back(i);
        continue;
      }
    }
    s_.tabu_code.insert(h);
    b.runners->dispatch(i);
  }
  b.runners->drain();
  st.compile_s += compiling.get();
  return again;
}

}  // namespace evk::gi::detail

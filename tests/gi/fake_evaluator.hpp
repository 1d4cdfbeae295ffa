// A deterministic fake "GPU" for the engine's CPU tests (toy problem): time falls with every deleted
// line, BLOCK_W=256 saves 0.05 ms, an if(false) is a wrong answer; the "code" ignores #pragma lines
// (so pragma-only variants are tier-2 duplicates, as unrolling a loop the compiler already unrolls
// would be). `speed` scales every time (a slower or faster GPU of the same kind); the class "small"
// makes every time 4x shorter. Cases report the property n (the toy's signal length).
#pragma once
#include <atomic>
#include <chrono>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "evk/cuda_library.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/grammar.hpp"

namespace evk::gi::testing {

class FakeEvaluator : public Evaluator {
 public:
  explicit FakeEvaluator(const Problem& p, double speed = 1.0, std::string name = "fake")
      : p_(p), speed_(speed), name_(std::move(name)) {}
  DeviceSummary device() override { return {name_, 90, 1, 1, 0, 1, "580.0", "13.0"}; }
  CaseInfo set_case(std::uint64_t seed, bool holdout, const std::string& size_class) override {
    case_ = seed;
    holdout_ = holdout;
    class_ = size_class.empty() ? "large" : size_class;
    {
      std::lock_guard<std::mutex> lk(mu_);
      cases.push_back(class_ + (holdout ? "/h" : "/t") + std::to_string(seed));
    }
    const double n = class_ == "small" ? 1048576.0 + static_cast<double>(seed % 1000) : 4194304.0 + static_cast<double>(seed % 1000);
    return {"fake " + class_ + " case " + std::to_string(seed), 1, class_, {{"n", n}}};
  }
  std::vector<std::string> options(const Config& c) const override { return p_.compile_options(c); }
  std::vector<Compiled> compile(const std::vector<Variant>& vs) override {
    std::vector<Compiled> out;
    for (const auto& v : vs) {
      Compiled c;
      std::string pre = preprocess(v.source, defines_of(p_.compile_options(v.config), nullptr));
      std::string code = std::regex_replace(pre, std::regex("#pragma unroll[^\n]*\n"), "");
      compiled_phenotypes.push_back(pre + cfg_text(v.config));
      c.ok = true;
      c.cubin.assign(code.begin(), code.end());
      c.code_hash = fnv1a64(code.data(), code.size());
      out.push_back(c);
    }
    return out;
  }
  RunResult run(const Compiled& c, const Config& cfg, const TimingSpec&, double) override {
    std::string s(c.cubin.begin(), c.cubin.end());
    RunResult r;
    r.status = RunResult::Status::ok;
    ++runs;
    if (delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay_us * (1 + runs % 3)));
    int deleted = 0;
    for (std::size_t p = s.find("\n;\n"); p != std::string::npos; p = s.find("\n;\n", p + 1)) ++deleted;
    double ms = 1.0 - 0.01 * deleted + (cfg.at("BLOCK_W") == "256" ? -0.05 : 0.0) + 1e-6 * static_cast<double>(case_ % 7);
    if (class_ == "small") ms *= 0.25;
    r.median_ms = ms * speed_;
    r.check.penalty = s.find("if (false)") != std::string::npos ? 100 : 0;
    if (r.check.penalty > 0) r.check.max_error = 1;
    return r;
  }
  static std::string cfg_text(const Config& c) {
    std::string t;
    for (auto& [k, v] : c) t += k + "=" + v + ";";
    return t;
  }
  std::vector<std::string> compiled_phenotypes;
  std::vector<std::string> cases;  // every set_case: class/t|h seed
  std::atomic<int> runs{0};
  int delay_us = 0;                // sleep per run (lane tests: runs overlap and finish out of order)

 protected:
  const Problem& p_;
  double speed_;
  std::string name_;
  std::uint64_t case_ = 0;
  bool holdout_ = false;
  std::string class_ = "large";
  std::mutex mu_;
};

}  // namespace evk::gi::testing

#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "cli/commands.hpp"
#include "evk/error.hpp"

namespace evk::reg_deform {

void Stages::done(const std::string& stage) {
  const auto now = std::chrono::steady_clock::now();
  done_part(stage, std::chrono::duration<double, std::milli>(now - t0).count());
  t0 = now;
}

void Stages::done_part(const std::string& stage, double ms) {
  times[stage] = ms;
  char buf[128];
  std::snprintf(buf, sizeof buf, "  %-10s %9.2f ms", stage.c_str(), ms);
  verbose_line(opt, buf);
  t0 += std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::milli>(ms));
}

RunOptions run_options(const CommonOptions& c, int threads) {
  RunOptions r;
  r.backend = c.backend;
  r.kernel = c.kernel;
  r.device = c.device;
  r.threads = threads;
  return r;
}

Plan plan_verbose(const CommonOptions& c, const Request& request, const std::string& what, int threads) {
  Plan p = plan_run(run_options(c, threads), request);
  std::string k = p.info.kernel;
  if (p.gpu()) k += ", " + p.kernel.describe();
  verbose_line(c, "backend: " + p.info.backend + " (" + p.backend.reason + "), " + what + " " + k);
  return p;
}

std::future<Plan> start_backend(const CommonOptions& c, int threads) {
  if (c.backend != "auto" && c.backend != "cpu" && c.backend != "gpu")
    input_error("--backend " + c.backend, "must be auto, cpu or gpu");
  const RunOptions run = run_options(c, threads);
  return std::async(std::launch::async, [run] { return plan_backend(run); });
}

nlohmann::json summary(const std::string& cmd, const Plan& p, const Stages& st) {
  return {{"command", cmd},           {"backend", p.info.backend},      {"device", p.info.device},
          {"kernel", p.info.kernel},  {"genome", p.kernel.genome},      {"times_ms", st.times}};
}

void print_json(const nlohmann::json& j, const CommonOptions& opt) {
  if (opt.json) std::cout << j.dump(2) << "\n";
}

float parse_pad(const std::string& s) {
  if (s == "nan" || s == "NaN") return std::numeric_limits<float>::quiet_NaN();
  try {
    std::size_t used = 0;
    const float v = std::stof(s, &used);
    if (used == s.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  input_error("--pad", "'" + s + "' is not a number or nan");
}

}  // namespace evk::reg_deform

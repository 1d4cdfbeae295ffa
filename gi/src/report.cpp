// The run's markdown report and its SVG fitness-per-generation plot (written by us, no libraries).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "evk/error.hpp"
#include "evk/gi/search.hpp"

namespace fs = std::filesystem;

namespace evk::gi {

std::string fitness_svg(const std::vector<GenerationStats>& h) {
  const double W = 640, H = 360, L = 60, R = 20, T = 30, B = 45;
  std::vector<double> best, med;
  double ymax = 1.1, ymin = 0.9;
  // time: speed-ups; energy, edp: the best's gain in the objective (the median is of times only)
  const std::string objective = h.empty() ? "time" : h.front().objective;
  const bool time = objective == "time";
  for (const auto& s : h) {
    double b = time ? (s.best_ms > 0 ? s.ref_ms / s.best_ms : 0) : s.best_gain;
    double m = time && s.median_ms > 0 ? s.ref_ms / s.median_ms : 0;
    best.push_back(b);
    med.push_back(m);
    if (b > 0) ymax = std::max(ymax, b), ymin = std::min(ymin, b);
    if (m > 0) ymax = std::max(ymax, m), ymin = std::min(ymin, m);
  }
  ymax = std::ceil(ymax * 10) / 10;
  ymin = std::floor(ymin * 10) / 10;
  int n = static_cast<int>(h.size());
  auto X = [&](int i) { return L + (n > 1 ? (W - L - R) * i / (n - 1) : (W - L - R) / 2); };
  auto Y = [&](double v) { return T + (H - T - B) * (ymax - v) / (ymax - ymin); };
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\">"
    << (time ? "speed-up" : objective + " gain (original / best)") << " over the original per generation (same case)</text>\n";
  for (int k = 0; k <= 4; ++k) {
    double v = ymin + (ymax - ymin) * k / 4;
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << Y(v) << "\" y2=\"" << Y(v) << "\" stroke=\"#ddd\"/>\n"
      << "<text x=\"" << L - 6 << "\" y=\"" << Y(v) + 4 << "\" text-anchor=\"end\">" << std::setprecision(2) << v << "</text>\n";
  }
  o.precision(1);
  o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << Y(1) << "\" y2=\"" << Y(1) << "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
  for (int i = 0; i < n; i += std::max(1, n / 10))
    o << "<text x=\"" << X(i) << "\" y=\"" << H - B + 16 << "\" text-anchor=\"middle\">" << h[i].generation << "</text>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">generation</text>\n";
  auto line = [&](const std::vector<double>& v, const char* colour, const char* label, int row) {
    o << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (int i = 0; i < n; ++i)
      if (v[i] > 0) o << X(i) << "," << Y(v[i]) << " ";
    o << "\"/>\n";
    for (int i = 0; i < n; ++i)
      if (v[i] > 0) o << "<circle cx=\"" << X(i) << "\" cy=\"" << Y(v[i]) << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
    o << "<text x=\"" << L + 10 << "\" y=\"" << T + 14 * row << "\" fill=\"" << colour << "\">" << label << "</text>\n";
  };
  line(best, "#c0392b", "best correct candidate", 1);
  if (time) line(med, "#2e86c1", "median correct candidate", 2);
  o << "</svg>\n";
  return o.str();
}

void write_report(const std::string& dir) {
  // every input read and checked before anything is written
  auto h = read_run_log(dir);
  nlohmann::json cfg = nlohmann::json::object();
  const std::string cfg_path = (fs::path(dir) / "config.json").string();
  if (fs::exists(cfg_path)) {
    try {
      cfg = nlohmann::json::parse(read_text(cfg_path));
    } catch (const nlohmann::json::exception& e) {
      input_error(cfg_path, std::string("not JSON: ") + e.what());
    }
    if (!cfg.is_object()) input_error(cfg_path, "not a JSON object");
  }
  // a value as written (the report only shows it), "?" when absent
  const auto shown = [&](const char* k) {
    if (!cfg.contains(k)) return std::string("?");
    return cfg[k].is_string() ? cfg[k].get<std::string>() : cfg[k].dump();
  };
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o << "# GI run report: " << shown("problem") << "\n\n";
  o << "- device: " << shown("device") << " (sm_" << shown("cc") << ")\n"
    << "- population " << shown("population") << ", generations " << shown("generations") << ", seed "
    << shown("seed") << ", tolerance " << shown("tolerance") << "\n";
  // the objective (config.json; runs from before objectives: time)
  const std::string objective = cfg.contains("objective") ? shown("objective") : "time";
  const bool time = objective == "time";
  if (time)
    o << "- objective: time (median kernel ms)\n";
  else
    o << "- objective: " << objective << (objective == "edp" ? " (joules x ms" : " (joules")
      << " per launch; joules from the GPU's energy counter over a burst of launches; parents within the time tolerance)\n";
  if (cfg.contains("classes") && cfg["classes"].is_array() && !cfg["classes"].empty()) {
    o << "- size classes (cycled by generation):";
    for (const auto& c : cfg["classes"]) o << " " << (c.is_string() ? c.get<std::string>() : c.dump());
    o << "\n";
  }
  if (cfg.contains("devices") && cfg["devices"].is_array() && cfg["devices"].size() > 1)
    o << "- devices: " << cfg["devices"].size() << " lanes (" << cfg["devices"].dump() << "), times on lane 0's scale\n";
  o << "\n";
  double comp = 0, run = 0, wall = 0;
  int evaluated = 0, compiled = 0, correct = 0;
  for (const auto& s : h) {
    comp += s.compile_s;
    run += s.run_s;
    wall += s.wall_s;
    evaluated += s.evaluated;
    compiled += s.compiled;
    correct += s.correct;
  }
  if (!h.empty()) {
    o.precision(3);
    o << "## Summary\n\n";
    if (!time)
      o << "- best " << objective << " gain over the original (same training case): " << h.back().best_so_far_gain
        << " (its speed-up " << h.back().best_so_far_speedup << ")\n";
    else
      o << "- best speed-up over the original (same training case): " << h.back().best_so_far_speedup << "\n";
    o
      << "- best genome: `" << h.back().best_so_far_genome << "`\n"
      << "- candidates evaluated: " << evaluated << ", compiled " << compiled << " ("
      << (evaluated ? 100.0 * compiled / evaluated : 0) << "%), correct " << correct << "\n";
    o.precision(1);
    o << "- time: " << wall << " s total, compile " << comp << " s, run " << run << " s; "
      << (wall > 0 ? evaluated / wall : 0) << " candidates/s\n\n";
  }
  o << "![fitness per generation](fitness.svg)\n\n## Generations\n\n"
    << "| gen | class | ref ms | best ms | speed-up | "
    << (time ? "" : "ref J | best J | " + objective + " gain | ")
    << "median ms | compiled | correct | faster | parents | tabu g/p/c | crash/hang | compile s | run s |\n"
    << "|---|---|---|---|---|" << (time ? "" : "---|---|---|") << "---|---|---|---|---|---|---|---|---|\n";
  for (const auto& s : h) {
    o.precision(4);
    o << "| " << s.generation << " | " << (s.size_class.empty() ? "-" : s.size_class) << " | " << s.ref_ms << " | "
      << s.best_ms << " | ";
    o.precision(3);
    o << s.best_speedup << " | ";
    if (!time) {  // joules per launch of the reference and the best, and the best's gain in the objective
      o.precision(5);
      o << s.ref_j << " | " << s.best_j << " | ";
      o.precision(3);
      o << s.best_gain << " | ";
    }
    o.precision(4);
    o << s.median_ms << " | " << s.compiled << "/" << s.evaluated << " | " << s.correct << " | " << s.faster << " | "
      << s.parents << " | " << s.tabu_genotype << "/" << s.tabu_phenotype << "/" << s.tabu_code << " | " << s.crashes
      << "/" << s.hangs << " | ";
    o.precision(1);
    o << s.compile_s << " | " << s.run_s << " |\n";
  }
  write_text_atomic((fs::path(dir) / "fitness.svg").string(), fitness_svg(h));
  write_text_atomic((fs::path(dir) / "report.md").string(), o.str());
}

}  // namespace evk::gi

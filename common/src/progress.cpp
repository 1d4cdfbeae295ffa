#include "evk/progress.hpp"

#include <unistd.h>

#include <cmath>

namespace evk {

Progress::Progress(std::string label, double total, std::string unit, bool enabled, std::FILE* out)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), enabled_(enabled), out_(out) {
  tty_ = ::isatty(::fileno(out_)) != 0;
  start_ = last_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

std::string Progress::format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%02ld:%02ld", t / 60, t % 60);
  return buf;
}

void Progress::update(double done) {
  done_ = done;
  if (!enabled_ || finished_) return;
  auto now = std::chrono::steady_clock::now();
  double since = std::chrono::duration<double>(now - last_).count();
  if (since < (tty_ ? 0.1 : 5.0)) return;
  last_ = now;
  draw(false);
}

void Progress::draw(bool final) {
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = el > 0 ? done_ / el : 0;
  double frac = total_ > 0 ? std::min(1.0, done_ / total_) : 0;
  double eta = rate > 0 ? (total_ - done_) / rate : NAN;
  if (tty_) {
    const int w = 30;
    int fill = static_cast<int>(frac * w);
    std::string bar(static_cast<size_t>(fill), '#');
    bar.resize(w, '.');
    std::fprintf(out_, "\r%s [%s] %5.1f%% %.4g %s/s ETA %s%s", label_.c_str(), bar.c_str(), 100 * frac, rate,
                 unit_.c_str(), format_duration(final ? 0 : eta).c_str(), final ? "\n" : "");
  } else {
    std::fprintf(out_, "%s: %.0f/%.0f %s (%.1f%%), %.4g %s/s, elapsed %s, ETA %s\n", label_.c_str(), done_, total_,
                 unit_.c_str(), 100 * frac, rate, unit_.c_str(), format_duration(el).c_str(),
                 format_duration(final ? 0 : eta).c_str());
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  draw(true);
}

}  // namespace evk

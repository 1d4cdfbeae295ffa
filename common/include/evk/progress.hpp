// Progress display for long CLI work: on a TTY a bar with rate and ETA, otherwise a line every
// few seconds. Used by CLIs only (libraries take a callback).
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

namespace evk {
class Progress {
 public:
  Progress(std::string label, double total, std::string unit, bool enabled = true, std::FILE* out = stderr);
  ~Progress();
  void update(double done);  // cheap; redraws at most ~10x/s on a TTY, every 5 s otherwise
  void finish();
  static std::string format_duration(double seconds);

 private:
  void draw(bool final);
  std::string label_, unit_;
  double total_, done_ = 0;
  bool enabled_, tty_, finished_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_;
};
}  // namespace evk

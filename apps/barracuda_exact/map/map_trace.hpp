// `map --trace FILE`: when each batch went through each stage, as a TSV a user can plot or read to
// see what bounds a run (the GPU lanes, the input's inflation, the records, the compression).
// One row per (batch, stage): the index load first (batch "-"), then scan (text of the batch read,
// waiting for the inflation included), parse, map (the lane's search: its kernel, later passes,
// position lookup, the reads the GPU left to the host, and the whole search (the GPU's or the
// CPU backend's) in the columns after), finish (samse or sampe), format and write.
// Seconds from the start of the run. Internal to map/.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "map/mapper.hpp"

namespace evk::barracuda_exact {

struct TraceRow {
  std::int64_t batch = -1;  // -1: not a batch's (the index load)
  std::string stage;
  int lane = -1;
  double start = 0, end = 0;
  std::uint64_t reads = 0;
  MapTimes lane_times;  // map rows: what the lane spent on this batch
};

class MapTrace {
 public:
  using Clock = std::chrono::steady_clock;
  explicit MapTrace(Clock::time_point t0) : t0_(t0) {}
  double now() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  void add(TraceRow row) {
    std::lock_guard<std::mutex> l(m_);
    rows_.push_back(std::move(row));
  }
  // The rows sorted by start, tab-separated, with a header line.
  std::string tsv() const;

 private:
  Clock::time_point t0_;
  mutable std::mutex m_;
  std::vector<TraceRow> rows_;
};

// The difference of two lanes' accumulated times (after - before).
MapTimes times_since(const MapTimes& after, const MapTimes& before);

}  // namespace evk::barracuda_exact

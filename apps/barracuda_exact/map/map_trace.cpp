#include "map/map_trace.hpp"

#include <algorithm>
#include <cstdio>

namespace evk::barracuda_exact {

MapTimes times_since(const MapTimes& after, const MapTimes& before) {
  MapTimes d;
  d.transfer = after.transfer - before.transfer;
  d.kernel = after.kernel - before.kernel;
  d.match = after.match - before.match;
  d.lookup = after.lookup - before.lookup;
  d.fallback = after.fallback - before.fallback;
  d.records = after.records - before.records;
  d.later_passes = after.later_passes - before.later_passes;
  for (std::size_t k = 0; k < kMapLaterPasses; ++k) d.pass[k] = after.pass[k] - before.pass[k];
  return d;
}

std::string MapTrace::tsv() const {
  std::vector<TraceRow> rows;
  {
    std::lock_guard<std::mutex> l(m_);
    rows = rows_;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TraceRow& a, const TraceRow& b) { return a.start < b.start; });
  std::string s = "batch\tstage\tlane\tstart_s\tend_s\treads\tkernel_s";
  for (std::size_t k = 0; k < kMapLaterPasses; ++k) s += "\tpass" + std::to_string(k + 1) + "_s";
  s += "\tlookup_s\thost_search_s\tsearch_s\n";
  char buf[128];
  for (const TraceRow& r : rows) {
    s += r.batch < 0 ? std::string("-") : std::to_string(r.batch);
    s += '\t' + r.stage + '\t' + (r.lane < 0 ? std::string("-") : std::to_string(r.lane));
    std::snprintf(buf, sizeof buf, "\t%.6f\t%.6f\t%llu", r.start, r.end, static_cast<unsigned long long>(r.reads));
    s += buf;
    const bool m = r.stage == "map";
    auto col = [&](double v) {
      if (m) std::snprintf(buf, sizeof buf, "\t%.6f", v);
      s += m ? buf : "\t-";
    };
    col(r.lane_times.kernel);
    for (std::size_t k = 0; k < kMapLaterPasses; ++k) col(r.lane_times.pass[k]);
    col(r.lane_times.lookup);
    col(r.lane_times.fallback);
    col(r.lane_times.match);
    s += '\n';
  }
  return s;
}

}  // namespace evk::barracuda_exact

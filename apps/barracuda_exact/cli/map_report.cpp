// `map`'s summary: one line on stderr (when the output is a file), the --json keys on stdout, the
// -v lines (the mapper, the kernel's origin, the busy seconds of every stage).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli.hpp"

namespace evk::barracuda_exact {

namespace {

// The keys both pipelined modes report: the backend, the mapper, the input and the resources used.
// Each later GPU pass of the inexact search: reads in, reads answered, busy seconds.
nlohmann::json later_passes_json(const MapCounts& c, const MapStats& st) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t k = 0; k < kMapLaterPasses; ++k)
    a.push_back({{"reads", c.pass_reads[k]}, {"answered", c.pass_answered[k]}, {"seconds", st.pass_s[k]}});
  return a;
}

nlohmann::json pipeline_keys(const MapOptions& mo, const MapStats& st) {
  return {{"backend", mo.gpu && st.gpu_fallback.empty() ? "gpu" : "cpu"}, {"gpu_fallback", st.gpu_fallback},
          {"kernel_origin", st.kernel_origin},
          {"mapper", st.mapper},                     {"input_format", st.input_format},
          {"threads", st.threads},                   {"lanes", st.lanes},
          {"batches_in_flight_max", st.batches},     {"peak_rss_mib", st.peak_rss_mib},
          {"cpu_seconds", st.cpu_s},                 {"input_bytes", st.input_bytes},
          {"text_bytes", st.text_bytes}};
}

}  // namespace

void print_exact_stats(const MapOptions& mo, const CommonOptions& co, const MapStats& st) {
  auto rate = [&](double s) { return s > 0 ? static_cast<double>(st.reads) / s : 0.0; };
  if (co.json) {
    nlohmann::json j = {{"mode", "exact"},
                        {"reads", st.reads},
                        {"exact_unique", st.unique},
                        {"exact_repeat", st.repeat},
                        {"unmatched", st.unmatched},
                        {"bridging_contigs", st.bridging},
                        {"seconds", {{"index", st.index_s}, {"read", st.read_s}, {"inflate", st.inflate_s},
                                     {"scan", st.scan_s}, {"parse", st.parse_s}, {"transfer", st.transfer_s},
                                     {"kernel", st.kernel_s}, {"match", st.match_s}, {"position_lookup", st.lookup_s},
                                     {"format", st.format_s}, {"write", st.write_s}, {"total", st.total_s}}},
                        {"reads_per_s", {{"inflate", rate(st.inflate_s)}, {"scan", rate(st.scan_s)},
                                         {"parse", rate(st.parse_s)}, {"kernel", rate(st.kernel_s)},
                                         {"match", rate(st.match_s)}, {"position_lookup", rate(st.lookup_s)},
                                         {"format", rate(st.format_s)}, {"write", rate(st.write_s)},
                                         {"end_to_end", rate(st.total_s)}}}};
    j.update(pipeline_keys(mo, st));
    std::cout << j.dump(2) << "\n";
  } else if (mo.out != "-") {
    auto pct = [&](std::uint64_t n) { return st.reads ? 100.0 * static_cast<double>(n) / static_cast<double>(st.reads) : 0.0; };
    std::fprintf(stderr, "%llu reads: %llu exact unique (%.1f%%), %llu exact repeat (%.1f%%), %llu unmatched (%.1f%%); %.2f s, %.0f reads/s\n",
                 static_cast<unsigned long long>(st.reads), static_cast<unsigned long long>(st.unique), pct(st.unique),
                 static_cast<unsigned long long>(st.repeat), pct(st.repeat),
                 static_cast<unsigned long long>(st.unmatched), pct(st.unmatched), st.total_s, rate(st.total_s));
  }
  verbose_line(co, st.mapper + "; input " + st.input_format + ", " + std::to_string(st.threads) + " threads");
  if (!st.kernel_origin.empty()) verbose_line(co, "kernel loaded from " + st.kernel_origin);
  verbose_line(co, "busy seconds per stage: index " + std::to_string(st.index_s) + ", read " + std::to_string(st.read_s) +
                            ", inflate " + std::to_string(st.inflate_s) + ", scan " + std::to_string(st.scan_s) +
                            ", parse " + std::to_string(st.parse_s) + ", transfer " + std::to_string(st.transfer_s) +
                            ", kernel " + std::to_string(st.kernel_s) + ", match " + std::to_string(st.match_s) +
                            ", position lookup " + std::to_string(st.lookup_s) + ", format " + std::to_string(st.format_s) +
                            ", write " + std::to_string(st.write_s) + "; total " + std::to_string(st.total_s));
}

// The inexact mode (single end, or pairs with READS2): its summary and keys, and the pipeline's
// stages (as the exact mode's).
void print_aln_stats(const MapOptions& mo, const CommonOptions& co, const MapStats& st) {
  auto rate = [&](double s) { return s > 0 ? static_cast<double>(st.reads) / s : 0.0; };
  const MapCounts& c = st.counts;
  const std::uint64_t mapped = c.unique + c.repeat;
  if (co.json) {
    nlohmann::json by = nlohmann::json::object();
    for (int d = 0; d < 8; ++d) by[d < 7 ? std::to_string(d) : "7+"] = c.by_diff[d];
    nlohmann::json j = {{"mode", mo.reads2.empty() ? "single" : "paired"},
                        {"reads", st.reads},
                        {"pairs", c.pairs},
                        {"mapped", mapped},
                        {"exact", c.by_diff[0]},
                        {"inexact", mapped - c.by_diff[0]},
                        {"mapped_by_edit_distance", by},
                        {"unique", c.unique},
                        {"repeat", c.repeat},
                        {"gapped", c.gapped},
                        {"unmapped", c.unmatched},
                        {"proper_pairs_reads", c.proper_pairs},
                        {"mate_rescued", c.mate_rescued},
                        {"gpu_first_pass_handed_back", c.first_pass_back},
                        {"gpu_fallback_reads", c.handed_back},
                        {"gpu_later_passes", later_passes_json(c, st)},
                        {"seconds", {{"index", st.index_s}, {"read", st.read_s}, {"inflate", st.inflate_s},
                                     {"scan", st.scan_s}, {"parse", st.parse_s}, {"search", st.match_s},
                                     {"transfer", st.transfer_s}, {"kernel", st.kernel_s}, {"later_passes", st.later_passes_s}, {"fallback", st.fallback_s},
                                     {"position_lookup", st.lookup_s}, {"sam", st.records_s}, {"format", st.format_s}, {"write", st.write_s},
                                     {"total", st.total_s}}},
                        {"reads_per_s", {{"inflate", rate(st.inflate_s)}, {"scan", rate(st.scan_s)},
                                         {"parse", rate(st.parse_s)}, {"search", rate(st.match_s)},
                                         {"kernel", rate(st.kernel_s)}, {"sam", rate(st.records_s)},
                                         {"format", rate(st.format_s)}, {"write", rate(st.write_s)},
                                         {"end_to_end", rate(st.total_s)}}}};
    j.update(pipeline_keys(mo, st));
    std::cout << j.dump(2) << "\n";
  } else if (mo.out != "-") {
    auto pct = [&](std::uint64_t n) { return st.reads ? 100.0 * static_cast<double>(n) / static_cast<double>(st.reads) : 0.0; };
    std::fprintf(stderr, "%llu reads: %llu mapped (%.1f%%; %llu exact, %llu with differences, %llu gapped), %llu repeat, %llu unmapped (%.1f%%); %.2f s, %.0f reads/s\n",
                 static_cast<unsigned long long>(st.reads), static_cast<unsigned long long>(mapped), pct(mapped),
                 static_cast<unsigned long long>(c.by_diff[0]), static_cast<unsigned long long>(mapped - c.by_diff[0]),
                 static_cast<unsigned long long>(c.gapped), static_cast<unsigned long long>(c.repeat),
                 static_cast<unsigned long long>(c.unmatched), pct(c.unmatched), st.total_s, rate(st.total_s));
  }
  verbose_line(co, st.mapper + "; input " + st.input_format + ", " + std::to_string(st.threads) + " threads");
  verbose_line(co, "busy seconds per stage: index " + std::to_string(st.index_s) + ", read " + std::to_string(st.read_s) +
                            ", inflate " + std::to_string(st.inflate_s) + ", scan " + std::to_string(st.scan_s) +
                            ", parse " + std::to_string(st.parse_s) + ", search " + std::to_string(st.match_s) +
                            " (transfer " + std::to_string(st.transfer_s) + ", kernel " + std::to_string(st.kernel_s) +
                            ", later GPU passes " + std::to_string(st.later_passes_s) + ", CPU fallback " + std::to_string(st.fallback_s) + ", position lookup " +
                            std::to_string(st.lookup_s) + "), " + (mo.reads2.empty() ? "samse " : "sampe ") + std::to_string(st.records_s) +
                            ", format " + std::to_string(st.format_s) + ", write " + std::to_string(st.write_s) +
                            "; total " + std::to_string(st.total_s));
}

}  // namespace evk::barracuda_exact

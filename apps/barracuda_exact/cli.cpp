// barracuda_exact command line: argument parsing and printing only; the work lives in core/ and io/.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/index.hpp"
#include "core/kernel_config.hpp"
#include "core/kernel_variant.hpp"
#include "evk/atomic_file.hpp"
#include "evk/device.hpp"
#include "evk/cli.hpp"
#include "evk/gi/cli.hpp"
#include "core/aln_gi_problem.hpp"
#include "core/gi_problem.hpp"
#include "evk/error.hpp"
#include "io/index_files.hpp"
#include "io/aln_run.hpp"
#include "io/map_run.hpp"
#include "io/sequences.hpp"
#include "io/split_reads.hpp"

namespace bc = evk::barracuda_exact;

namespace {

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void add_index_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("index", "Build the bwa 0.7 index (REF.fa.{bwt,sa,pac,ann,amb}) of a FASTA reference");
  auto ref = std::make_shared<std::string>();
  auto opt = std::make_shared<evk::CommonOptions>();
  cmd->add_option("REF", *ref, "FASTA reference, plain or gzip")->required();
  cmd->add_flag("--verbose,-v", opt->verbose, "Per-stage times");
  cmd->add_flag("--json", opt->json, "Machine-readable summary on stdout");
  cmd->callback([ref, opt] {
    auto t = std::chrono::steady_clock::now();
    const auto seqs = bc::read_reference(*ref);
    const double read_s = seconds_since(t);
    t = std::chrono::steady_clock::now();
    const bc::BwtIndex idx = bc::build_index(seqs);
    const double build_s = seconds_since(t);
    t = std::chrono::steady_clock::now();
    bc::write_index(idx, *ref);
    const double write_s = seconds_since(t);
    if (opt->json) {
      nlohmann::json j = {{"reference", *ref},       {"contigs", idx.contigs.size()}, {"bases", idx.l_pac},
                          {"ambiguous_runs", idx.holes.size()}, {"read_s", read_s}, {"build_s", build_s},
                          {"write_s", write_s}};
      std::cout << j.dump(2) << "\n";
    } else {
      std::printf("indexed %s: %zu contigs, %lld bases, %zu ambiguous runs\n", ref->c_str(), idx.contigs.size(),
                  static_cast<long long>(idx.l_pac), idx.holes.size());
    }
    evk::verbose_line(*opt, "read " + std::to_string(read_s) + " s, build " + std::to_string(build_s) + " s, write " +
                                std::to_string(write_s) + " s");
  });
}

// bwa aln's -n: an integer is a maximum number of differences, a fraction a missing probability.
void parse_max_diff(const std::string& v, bc::AlnOptions& o) {
  char* end = nullptr;
  if (v.find('.') != std::string::npos) {
    const double f = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end || !(f > 0 && f < 1)) throw evk::InputError("--max-diff: " + v + " is neither an integer >= 0 nor a probability in (0, 1)");
    o.fnr = static_cast<float>(f);
    o.max_diff = -1;
  } else {
    const long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end || n < 0 || n > 100) throw evk::InputError("--max-diff: " + v + " is neither an integer >= 0 nor a probability in (0, 1)");
    o.max_diff = static_cast<int>(n);
    o.fnr = -1.0f;
  }
}

// The keys both pipelined modes report: the backend, the mapper, the input and the resources used.
nlohmann::json pipeline_keys(const bc::MapOptions& mo, const bc::MapStats& st) {
  return {{"backend", mo.gpu ? "gpu" : "cpu"},      {"kernel_origin", st.kernel_origin},
          {"mapper", st.mapper},                     {"input_format", st.input_format},
          {"threads", st.threads},                   {"lanes", st.lanes},
          {"batches_in_flight_max", st.batches},     {"peak_rss_mib", st.peak_rss_mib},
          {"cpu_seconds", st.cpu_s},                 {"input_bytes", st.input_bytes},
          {"text_bytes", st.text_bytes}};
}

void print_exact_stats(const bc::MapOptions& mo, const evk::CommonOptions& co, const bc::MapStats& st) {
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
  evk::verbose_line(co, st.mapper + "; input " + st.input_format + ", " + std::to_string(st.threads) + " threads");
  if (!st.kernel_origin.empty()) evk::verbose_line(co, "kernel loaded from " + st.kernel_origin);
  evk::verbose_line(co, "busy seconds per stage: index " + std::to_string(st.index_s) + ", read " + std::to_string(st.read_s) +
                            ", inflate " + std::to_string(st.inflate_s) + ", scan " + std::to_string(st.scan_s) +
                            ", parse " + std::to_string(st.parse_s) + ", transfer " + std::to_string(st.transfer_s) +
                            ", kernel " + std::to_string(st.kernel_s) + ", match " + std::to_string(st.match_s) +
                            ", position lookup " + std::to_string(st.lookup_s) + ", format " + std::to_string(st.format_s) +
                            ", write " + std::to_string(st.write_s) + "; total " + std::to_string(st.total_s));
}

// The inexact mode (single end, or pairs with READS2) through the streaming pipeline: its summary
// and keys, and the pipeline's stages (as the exact mode's).
void print_aln_pipeline_stats(const bc::MapOptions& mo, const evk::CommonOptions& co, const bc::MapStats& st) {
  auto rate = [&](double s) { return s > 0 ? static_cast<double>(st.reads) / s : 0.0; };
  const bc::MapCounts& c = st.counts;
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
                        {"gpu_fallback_reads", c.handed_back},
                        {"seconds", {{"index", st.index_s}, {"read", st.read_s}, {"inflate", st.inflate_s},
                                     {"scan", st.scan_s}, {"parse", st.parse_s}, {"search", st.match_s},
                                     {"transfer", st.transfer_s}, {"kernel", st.kernel_s}, {"fallback", st.fallback_s},
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
  evk::verbose_line(co, st.mapper + "; input " + st.input_format + ", " + std::to_string(st.threads) + " threads");
  evk::verbose_line(co, "busy seconds per stage: index " + std::to_string(st.index_s) + ", read " + std::to_string(st.read_s) +
                            ", inflate " + std::to_string(st.inflate_s) + ", scan " + std::to_string(st.scan_s) +
                            ", parse " + std::to_string(st.parse_s) + ", search " + std::to_string(st.match_s) +
                            " (transfer " + std::to_string(st.transfer_s) + ", kernel " + std::to_string(st.kernel_s) +
                            ", CPU fallback " + std::to_string(st.fallback_s) + ", position lookup " +
                            std::to_string(st.lookup_s) + "), " + (mo.reads2.empty() ? "samse " : "sampe ") + std::to_string(st.records_s) +
                            ", format " + std::to_string(st.format_s) + ", write " + std::to_string(st.write_s) +
                            "; total " + std::to_string(st.total_s));
}

void add_map_command(CLI::App& app, const std::string& command_line) {
  auto* cmd = app.add_subcommand("map",
                                 "Map reads as bwa aln + samse/sampe (inexact: mismatches and a gap; single or paired "
                                 "end), or exactly with --exact (BarraCUDA's exact kernel on the GPU)");
  auto ao = std::make_shared<bc::AlnMapOptions>();
  auto co = std::make_shared<evk::CommonOptions>();
  auto exact = std::make_shared<bool>(false);
  auto max_diff = std::make_shared<std::string>();
  auto max_gape = std::make_shared<int>(-1);
  auto devices = std::make_shared<std::string>();
  bc::MapOptions& mo = ao->map;
  bc::AlnOptions& a = ao->aln;
  bc::PeOptions& pe = ao->pe;
  mo.command_line = command_line;
  cmd->add_option("REF", mo.ref, "Reference FASTA whose index files (REF.bwt ...) exist")->required();
  cmd->add_option("READS", mo.reads, "Reads: FASTQ or FASTA, plain, gzip or BGZF ('-' = stdin)")->required();
  cmd->add_option("READS2", ao->reads2, "Second ends of pairs (paired mode, as bwa sampe): same count and order as READS");
  cmd->add_option("-o,--output", mo.out, "Output .sam or .bam ('-' = SAM on stdout, BAM with -u)")->required();
  // the streaming pipeline's options (io/map_run.hpp)
  cmd->add_flag("-u,--uncompressed", mo.uncompressed, "Uncompressed BAM (for piping into samtools)");
  cmd->add_option("-l,--level", mo.level, "BAM compression level 1-9 (default: htslib's, 6)")->check(CLI::Range(1, 9));
  cmd->add_option("-t,--threads", mo.threads, "Worker threads and BAM compression threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--devices", *devices, "GPUs sharing the batches: all or a list like 0,1 (default: --device)");
  cmd->add_option("--streams", mo.streams, "CUDA streams (batches in flight) per GPU [2]")->check(CLI::Range(1, 16));
  cmd->add_option("--batch-reads", mo.batch_reads,
                  "Reads (pairs) per batch [exact: 65536; inexact: bwa's 262144, which bwa's output needs: bwa sampe "
                  "estimates the insert size per batch, and bwa aln's gap-open limit is per batch whenever "
                  "--max-gap-open exceeds the maximum differences]")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_flag("--exact", *exact, "Exact matches only (bwa aln -n 0 -o 0 | samse, the exact kernel): single end");
  cmd->add_option("--unmatched", mo.unmatched, "With --exact: also write reads without an exact hit here (FASTQ.gz)");
  cmd->add_option("-R,--read-group", ao->read_group, "Read group header line such as '@RG\\tID:foo\\tSM:bar' (RG:Z on every record)");
  auto* g = cmd->add_option_group("search", "bwa aln's options");
  g->add_option("--max-diff", *max_diff, "Maximum differences (INT) or missing probability at 2% error (FLOAT) [0.04]");
  g->add_option("--max-gap-open", a.max_gapo, "Maximum gap opens [1]")->check(CLI::NonNegativeNumber);
  g->add_option("--max-gap-ext", *max_gape, "Maximum gap extensions; set, they no longer count as differences [-1: long gaps off]");
  g->add_option("--indel-end-skip", a.indel_end_skip, "No indel within INT bp of the ends [5]")->check(CLI::NonNegativeNumber);
  g->add_option("--max-del-occ", a.max_del_occ, "Maximum occurrences for extending a long deletion [10]")->check(CLI::NonNegativeNumber);
  g->add_option("--seed-len", a.seed_len, "Seed length [32]")->check(CLI::PositiveNumber);
  g->add_option("--seed-diff", a.max_seed_diff, "Maximum differences in the seed [2]")->check(CLI::NonNegativeNumber);
  g->add_option("--queue-limit", a.max_entries, "Maximum entries in the search queue [2000000]")->check(CLI::PositiveNumber);
  g->add_option("--mismatch", a.s_mm, "Mismatch penalty [3]")->check(CLI::NonNegativeNumber);
  g->add_option("--gap-open", a.s_gapo, "Gap open penalty [11]")->check(CLI::NonNegativeNumber);
  g->add_option("--gap-ext", a.s_gape, "Gap extension penalty [4]")->check(CLI::NonNegativeNumber);
  g->add_option("--max-best", a.max_top2, "Stop searching when there are more than INT equally best hits [30]")->check(CLI::NonNegativeNumber);
  g->add_option("--trim-q", a.trim_qual, "Quality threshold for read trimming down to 35 bp [0]")->check(CLI::NonNegativeNumber);
  auto* p = cmd->add_option_group("pairing", "bwa sampe's options");
  p->add_option("--max-insert", pe.max_isize, "Maximum insert size when it cannot be inferred [500]")->check(CLI::PositiveNumber);
  p->add_option("--max-occ-pair", pe.max_occ, "Maximum occurrences of one end for pairing [100000]")->check(CLI::PositiveNumber);
  p->add_option("--pair-hits", pe.n_multi, "Maximum hits in XA for paired reads [3]")->check(CLI::NonNegativeNumber);
  p->add_option("--discordant-hits", pe.N_multi, "Maximum hits in XA for discordant pairs [10]")->check(CLI::NonNegativeNumber);
  p->add_option("--chimeric-prior", pe.ap_prior, "Prior of the chimeric rate (lower bound) [1e-05]")->check(CLI::PositiveNumber);
  p->add_flag("!--no-rescue", pe.sw, "No Smith-Waterman rescue of the unmapped mate");
  p->add_flag("--no-isize", pe.force_isize, "No insert size estimate (and no rescue)");
  evk::add_common_options(cmd, *co);
  cmd->callback([ao, co, exact, max_diff, max_gape, devices] {
    bc::MapOptions& m = ao->map;
    if (!max_diff->empty()) parse_max_diff(*max_diff, ao->aln);
    if (*max_gape > 0) {
      ao->aln.max_gape = *max_gape;
      ao->aln.gape_counts = false;
    }
    if (*exact && !ao->reads2.empty()) throw evk::InputError("--exact maps single-end reads only (no READS2)");
    if (!*exact && !m.unmatched.empty()) throw evk::InputError("--unmatched: only with --exact");
    if (!ao->reads2.empty() && ao->reads2 == m.reads) throw evk::InputError(ao->reads2 + ": READS2 is READS (give the second ends' file)");
    std::vector<int> devs;
    if (!devices->empty()) {
      devs = evk::parse_devices(*devices);
      if (devs.empty() && co->backend == "gpu") evk::input_error("--devices", evk::gpu_environment().status);
      if (!devs.empty()) co->device = devs.front();
    }
    const evk::BackendChoice be = evk::choose_backend(*co);
    const bool gpu = be.backend == evk::Backend::gpu;
    if (!gpu) devs.clear();
    if (gpu && devs.empty()) devs.push_back(be.device.index);
    const bool file_choice = co->kernel != "auto" && co->kernel != "original" && co->kernel != "evolved";
    std::string variant = "cpu reference";
    if (*exact && (gpu || file_choice)) {  // a genome FILE is checked even when the CPU backend will not use it
      evk::Registry reg = bc::make_registry();
      if (gpu) reg.load_overlay(evk::default_overlay_dir());
      const auto& env = evk::gpu_environment();
      auto key_of = [&](int d) {
        if (!gpu) return evk::DeviceKey{};
        if (d < 0 || d >= static_cast<int>(env.devices.size()))
          evk::input_error("--devices", "no CUDA device " + std::to_string(d) + " (" + std::to_string(env.devices.size()) +
                                            " found)");
        const auto& dv = env.devices[static_cast<std::size_t>(d)];
        return evk::DeviceKey{dv.cc(), dv.name};
      };
      const evk::Request req = gpu ? bc::make_request(bc::read_reference_length(m.ref)) : evk::Request{};
      variant.clear();
      for (int d : gpu ? devs : std::vector<int>{-1}) {
        const evk::Selection sel = reg.select("barracuda_exact", key_of(d), co->kernel, req);
        const bc::KernelVariant kv = bc::resolve_kernel_variant(sel.variant);
        if (gpu) {
          m.gpus.push_back(bc::GpuPlan{d, kv.config, kv.source});
          variant += std::string(variant.empty() ? "" : "; ") + "GPU " + std::to_string(d) + ": kernel " + sel.variant.id +
                     " [" + evk::to_string(sel.variant.source) + "] (" + sel.rule + "): " + kv.describe();
        } else {
          variant = "cpu reference (--kernel " + co->kernel + " is valid but only used by the GPU backend)";
        }
      }
    } else if (!*exact) {
      if (co->kernel != "auto" && co->kernel != "original")
        throw evk::InputError("--kernel " + co->kernel + ": the inexact kernel has no variants yet (use --exact for the exact kernel's)");
      if (gpu) variant = "inexact kernel (original)";
    }
    m.gpu = gpu;
    m.device = gpu ? devs.front() : 0;
    if (!*exact && gpu)
      for (int d : devs) m.gpus.push_back(bc::GpuPlan{d, {}, {}});
    if (!*exact) {  // inexact mapping (io/aln_mapper.hpp): single end, or pairs (io/map_pairs.cpp)
      m.inexact = true;
      m.aln = ao->aln;
      m.reads2 = ao->reads2;
      m.pe = ao->pe;
    }
    m.read_group = ao->read_group;  // -R and --max-best (X1 up to it) apply to the exact mode's records too
    m.max_top2 = ao->aln.max_top2;
    evk::verbose_line(*co, "backend: " + (gpu ? "GPU " + be.device.name : "CPU (" + be.reason + ")") + ", " + variant +
                               (*exact ? ", exact mode" : ao->reads2.empty() ? ", bwa aln + samse" : ", bwa aln + sampe"));
    if (m.out != "-") evk::check_not_an_input(m.out, {m.reads, m.ref, ao->reads2});
    if (!m.unmatched.empty()) evk::check_not_an_input(m.unmatched, {m.reads, m.ref, m.out});
    if (*exact) print_exact_stats(m, *co, bc::run_map(m));
    else print_aln_pipeline_stats(m, *co, bc::run_map(m));
  });
}

void add_split_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("split", "Split reads (and their mates) into shards for the workflow (workflows/map): "
                                          "blocks of records dealt round-robin, BGZF FASTQ out");
  auto so = std::make_shared<bc::SplitOptions>();
  auto shards = std::make_shared<int>(2);
  auto prefix = std::make_shared<std::string>();
  cmd->add_option("READS", so->reads, "Reads: FASTQ or FASTA, plain, gzip or BGZF ('-' = stdin)")->required();
  cmd->add_option("READS2", so->reads2, "Mates of READS (split in lockstep)");
  cmd->add_option("-n,--shards", *shards, "Number of shards (one open file each)")->check(CLI::Range(1, 1000))->required();
  cmd->add_option("-p,--prefix", *prefix, "Output prefix: PREFIX<i>.fq.gz, or PREFIX<i>_1.fq.gz and PREFIX<i>_2.fq.gz with mates")
      ->required();
  cmd->add_option("--block", so->block, "Records per block")->check(CLI::Range(1, 1 << 24));
  cmd->add_option("-t,--threads", so->threads, "Threads (0 = all cores)")->check(CLI::NonNegativeNumber);
  cmd->callback([so, shards, prefix] {
    for (int i = 0; i < *shards; ++i) {
      const std::string base = *prefix + std::to_string(i);
      so->out.push_back(so->reads2.empty() ? base + ".fq.gz" : base + "_1.fq.gz");
      if (!so->reads2.empty()) so->out2.push_back(base + "_2.fq.gz");
    }
    const auto counts = bc::split_reads(*so);
    std::uint64_t total = 0;
    for (auto c : counts) total += c;
    std::fprintf(stderr, "%llu records in %d shards\n", static_cast<unsigned long long>(total), *shards);
  });
}

}  // namespace

int main(int argc, char** argv) {
  auto app = evk::make_app("barracuda_exact", "Exact short-read mapping on a BWA index (BarraCUDA's kernel, genetically improved per GPU)");
  evk::add_devices_command(*app, "barracuda_exact", bc::make_registry);
  add_index_command(*app);
  add_map_command(*app, join_args(argc, argv));
  add_split_command(*app);
  evk::gi::add_gi_command(*app, [] { return evk::barracuda_exact::make_gi_problem(); }, bc::make_registry);
  evk::gi::add_gi_command(
      *app, [] { return evk::barracuda_exact::make_inexact_gi_problem(); }, {}, "gi-inexact",
      "Genetic improvement of the inexact-search kernel (problem barracuda_inexact): the same commands as gi");
  return evk::run_cli(*app, argc, argv);
}

// `barracuda_exact map`: its options (one MapOptions, bwa aln's and sampe's inside it), the backend
// and kernel variant chosen per GPU, then the one driver (map/map_run.hpp) and the summary.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "evk/atomic_file.hpp"
#include "evk/device.hpp"
#include "evk/dispatch.hpp"
#include "evk/error.hpp"
#include "evk/strings.hpp"
#include "gi/kernel_variant.hpp"
#include "io/index_files.hpp"
#include "map/map_run.hpp"

namespace evk::barracuda_exact {

namespace {

// bwa aln's -n: an integer is a maximum number of differences, a fraction a missing probability.
void parse_max_diff(const std::string& v, AlnOptions& o) {
  char* end = nullptr;
  if (v.find('.') != std::string::npos) {
    const double f = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end || !(f > 0 && f < 1)) throw InputError("--max-diff: " + v + " is neither an integer >= 0 nor a probability in (0, 1)");
    o.fnr = static_cast<float>(f);
    o.max_diff = -1;
  } else {
    const long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end || n < 0 || n > 100) throw InputError("--max-diff: " + v + " is neither an integer >= 0 nor a probability in (0, 1)");
    o.max_diff = static_cast<int>(n);
    o.fnr = -1.0f;
  }
}

// What `map`'s command line fills: the options, the backend choice and the arguments parsed after.
struct MapArgs {
  MapOptions m;
  CommonOptions co;
  bool exact = false;
  std::string max_diff, devices, gpu_memory;
  int max_gape = -1;
};

void add_map_options(CLI::App* cmd, MapArgs& x) {
  MapOptions& mo = x.m;
  AlnOptions& a = mo.aln;
  PeOptions& pe = mo.pe;
  cmd->add_option("REF", mo.ref, "Reference FASTA whose index files (REF.bwt ...) exist")->required();
  cmd->add_option("READS", mo.reads, "Reads: FASTQ or FASTA, plain, gzip or BGZF ('-' = stdin)")->required();
  cmd->add_option("READS2", mo.reads2, "Second ends of pairs (paired mode, as bwa sampe): same count and order as READS");
  cmd->add_option("-o,--output", mo.out, "Output .sam or .bam ('-' = SAM on stdout, BAM with -u)")->required();
  // the streaming pipeline's options (map/map_run.hpp)
  cmd->add_flag("-u,--uncompressed", mo.uncompressed, "Uncompressed BAM (for piping into samtools)");
  cmd->add_option("-l,--level", mo.level, "BAM compression level 1-9 [1: fastest; htslib's default 6 is 3-7% smaller for twice the compression time]")->check(CLI::Range(1, 9));
  cmd->add_option("-t,--threads", mo.threads, "Worker threads and BAM compression threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--devices", x.devices, "GPUs sharing the batches: all or a list like 0,1 (default: --device)");
  cmd->add_option("--gpu-memory", x.gpu_memory, "Device memory the index may take per GPU, like 8G (default: all "
                                                 "free); a GPU without room maps on the CPU (with --backend gpu: an error)");
  cmd->add_option("--streams", mo.streams, "CUDA streams (batches in flight) per GPU [inexact 4, exact 2]")->check(CLI::Range(1, 16));
  cmd->add_option("--gpu-passes", mo.gpu_passes, "Inexact: later GPU passes (a warp per read, larger stacks) over the reads the first hands back; the rest go to the CPU [3]")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--batch-reads", mo.batch_reads,
                  "Reads (pairs) per batch [exact: 65536; pairs: bwa's 262144, which bwa's output needs (bwa sampe "
                  "estimates the insert size per batch); single-end inexact on the GPU: 524288, two of bwa aln's "
                  "batches, each with its own gap-open limit as in bwa]")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_flag("--exact", x.exact, "Exact matches only (bwa aln -n 0 -o 0 | samse, the exact kernel): single end");
  cmd->add_option("--damage", mo.damage, "Also write the ancient-DNA damage profile of the records (as `damage`): "
                                         "PREFIX.misincorporation.txt, PREFIX.lgdistribution.txt");
  cmd->add_option("--damage-length", mo.damage_options.length, "With --damage: positions counted from each end [25]")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--damage-around", mo.damage_options.around, "With --damage: reference bases before and after each read in dnacomp.txt [10]")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--damage-min-mapq", mo.damage_options.min_mapq, "With --damage: leave out reads below this MAPQ [25]")
      ->check(CLI::Range(0, 255));
  cmd->add_option("--trace", mo.trace, "Also write when each batch went through each stage (index load, scan, parse, "
                                      "map with its GPU passes, finish, format, write) to this TSV");
  cmd->add_option("--unmatched", mo.unmatched, "With --exact: also write reads without an exact hit here (FASTQ.gz)");
  cmd->add_option("-R,--read-group", mo.read_group, "Read group header line such as '@RG\\tID:foo\\tSM:bar' (RG:Z on every record)");
  auto* g = cmd->add_option_group("search", "bwa aln's options");
  g->add_option("--max-diff", x.max_diff, "Maximum differences (INT) or missing probability at 2% error (FLOAT) [0.04]");
  g->add_option("--max-gap-open", a.max_gapo, "Maximum gap opens [1]")->check(CLI::NonNegativeNumber);
  g->add_option("--max-gap-ext", x.max_gape, "Maximum gap extensions; set, they no longer count as differences [-1: long gaps off]");
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
  add_common_options(cmd, x.co);
}

// The exact kernel's variant for each GPU of devs (into x.m.gpus), chosen by the registry; a genome
// FILE is checked even when the CPU backend will not use it. Returns the -v description.
std::string choose_exact_kernels(MapArgs& x, bool gpu, const std::vector<int>& devs) {
  const CommonOptions& co = x.co;
  Registry reg = make_registry();
  if (gpu) reg.load_overlay(default_overlay_dir());
  const auto& env = gpu_environment();
  auto key_of = [&](int d) {
    if (!gpu) return DeviceKey{};
    if (d < 0 || d >= static_cast<int>(env.devices.size()))
      input_error("--devices", "no CUDA device " + std::to_string(d) + " (" + std::to_string(env.devices.size()) + " found)");
    const auto& dv = env.devices[static_cast<std::size_t>(d)];
    return DeviceKey{dv.cc(), dv.name};
  };
  const Request req = gpu ? make_request(read_reference_length(x.m.ref)) : Request{};
  std::string variant;
  for (int d : gpu ? devs : std::vector<int>{-1}) {
    const Selection sel = reg.select("barracuda_exact", key_of(d), co.kernel, req);
    const KernelVariant kv = resolve_kernel_variant(sel.variant);
    if (gpu) {
      x.m.gpus.push_back(GpuPlan{d, kv.config, kv.source});
      variant += std::string(variant.empty() ? "" : "; ") + "GPU " + std::to_string(d) + ": kernel " + sel.variant.id + " [" +
                 to_string(sel.variant.source) + "] (" + sel.rule + "): " + kv.describe();
    } else {
      variant = "CPU backend (--kernel " + co.kernel + " is valid but only used by the GPU backend)";
    }
  }
  return variant;
}

// The inexact kernel's variant for each GPU of devs (into x.m.gpus), chosen by the registry from the
// overlay (gi-inexact evolve installs there) for the class of the search settings; a genome FILE is
// checked even when the CPU backend will not use it. Returns the -v description.
std::string choose_inexact_kernels(MapArgs& x, bool gpu, const std::vector<int>& devs) {
  const CommonOptions& co = x.co;
  Registry reg = make_registry();
  if (gpu) reg.load_overlay(default_overlay_dir());
  const auto& env = gpu_environment();
  const Request req = gpu ? make_inexact_request(x.m.aln.seed_len, read_reference_length(x.m.ref)) : Request{};
  std::string variant;
  for (int d : gpu ? devs : std::vector<int>{-1}) {
    DeviceKey key;
    if (gpu) {
      if (d < 0 || d >= static_cast<int>(env.devices.size()))
        input_error("--devices", "no CUDA device " + std::to_string(d) + " (" + std::to_string(env.devices.size()) + " found)");
      key = DeviceKey{env.devices[static_cast<std::size_t>(d)].cc(), env.devices[static_cast<std::size_t>(d)].name};
    }
    const Selection sel = reg.select("barracuda_inexact", key, co.kernel, req);
    const InexactVariant iv = resolve_inexact_variant(sel.variant);
    if (!gpu) return "CPU backend (--kernel " + co.kernel + " is valid but only used by the GPU backend)";
    x.m.gpus.push_back(GpuPlan{d, iv.config, iv.source});
    variant += std::string(variant.empty() ? "" : "; ") + "GPU " + std::to_string(d) + ": inexact kernel " + sel.variant.id +
               " [" + to_string(sel.variant.source) + "] (" + sel.rule + ", class " + req.size_class + "): " + iv.describe();
  }
  return variant;
}

void run_map_command(MapArgs& x) {
  MapOptions& m = x.m;
  CommonOptions& co = x.co;
  if (!x.max_diff.empty()) parse_max_diff(x.max_diff, m.aln);
  if (x.max_gape > 0) {
    m.aln.max_gape = x.max_gape;
    m.aln.gape_counts = false;
  }
  if (x.exact && !m.reads2.empty()) throw InputError("--exact maps single-end reads only (no READS2)");
  if (!x.exact && !m.unmatched.empty()) throw InputError("--unmatched: only with --exact");
  if (!m.reads2.empty() && m.reads2 == m.reads) throw InputError(m.reads2 + ": READS2 is READS (give the second ends' file)");
  std::vector<int> devs;
  if (!x.devices.empty()) {
    devs = evk::parse_devices(x.devices);
    if (devs.empty() && co.backend == "gpu") input_error("--devices", gpu_environment().status);
    if (!devs.empty()) co.device = devs.front();
  }
  const BackendChoice be = choose_backend(co);
  const bool gpu = be.backend == Backend::gpu;
  if (!gpu) devs.clear();
  if (gpu && devs.empty()) devs.push_back(be.device.index);
  const bool file_choice = co.kernel != "auto" && co.kernel != "original" && co.kernel != "evolved";
  std::string variant = "CPU backend";
  if (x.exact && (gpu || file_choice)) {
    variant = choose_exact_kernels(x, gpu, devs);
  } else if (!x.exact && (gpu || file_choice)) {
    variant = choose_inexact_kernels(x, gpu, devs);
  }
  m.gpu = gpu;
  m.gpu_forced = co.backend == "gpu";
  if (!x.gpu_memory.empty()) m.gpu_memory = parse_size(x.gpu_memory, "--gpu-memory", 1024);
  m.inexact = !x.exact;  // inexact mapping (map/aln_mapper.hpp): single end, or pairs
  verbose_line(co, "backend: " + (gpu ? "GPU " + be.device.name : "CPU (" + be.reason + ")") + ", " + variant +
                       (x.exact ? ", exact mode" : m.reads2.empty() ? ", bwa aln + samse" : ", bwa aln + sampe"));
  if (m.out != "-") check_not_an_input(m.out, {m.reads, m.ref, m.reads2});
  if (!m.unmatched.empty()) check_not_an_input(m.unmatched, {m.reads, m.ref, m.out});
  if (!m.trace.empty()) check_not_an_input(m.trace, {m.reads, m.ref, m.out});
  const MapStats st = run_map(m);
  if (!st.gpu_fallback.empty()) std::fprintf(stderr, "barracuda_exact: %s: mapped on the CPU\n", st.gpu_fallback.c_str());
  if (x.exact) print_exact_stats(m, co, st);
  else print_aln_stats(m, co, st);
}

}  // namespace

void add_map_command(CLI::App& app, const std::string& command_line) {
  auto* cmd = app.add_subcommand("map",
                                 "Map reads as bwa aln + samse/sampe (inexact: mismatches and a gap; single or paired "
                                 "end), or exactly with --exact (BarraCUDA's exact kernel on the GPU)");
  auto x = std::make_shared<MapArgs>();
  x->m.command_line = command_line;
  add_map_options(cmd, *x);
  cmd->callback([x] { run_map_command(*x); });
}

}  // namespace evk::barracuda_exact

// barracuda_exact command line: argument parsing and printing only; the work lives in core/, io/,
// map/ and gi/. This file: main, `split`; `index` in index_command.cpp, `map` in map_command.cpp
// (printing: map_report.cpp), `damage` in damage_command.cpp.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/index.hpp"
#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/gi/cli.hpp"
#include "gi/aln_gi_problem.hpp"
#include "gi/gi_problem.hpp"
#include "gi/kernel_variant.hpp"
#include "io/index_files.hpp"
#include "io/sequences.hpp"
#include "map/split_reads.hpp"

namespace bc = evk::barracuda_exact;

namespace {

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
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
  bc::add_index_command(*app);
  bc::add_map_command(*app, join_args(argc, argv));
  add_split_command(*app);
  bc::add_damage_command(*app);
  evk::gi::add_gi_command(*app, [] { return evk::barracuda_exact::make_gi_problem(); }, bc::make_registry);
  evk::gi::add_gi_command(
      *app, [] { return evk::barracuda_exact::make_inexact_gi_problem(); }, {}, "gi-inexact",
      "Genetic improvement of the inexact-search kernel (problem barracuda_inexact): the same commands as gi");
  return evk::run_cli(*app, argc, argv);
}

// bc_human_genome: a deterministic human-like test genome as FASTA (sim/README.md).
// One contig per thread (the longest first), written in chromosome order as each is done; a
// contig's bases depend only on (--seed, its index), never on --threads.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "evk/strings.hpp"
#include "genome_model.hpp"
#include "sim_cli.hpp"

namespace sim = evk::sim;

namespace {

struct Cli {
  std::string output = "-", size, stats;
  std::uint64_t seed = 1;
  int threads = 0, width = 60;
  bool soft_mask = false;
};

void write_all(std::FILE* out, const char* p, std::size_t n, const std::string& path) {
  if (std::fwrite(p, 1, n, out) != n) throw evk::InputError(path + ": write failed");
}

void write_contig(std::FILE* out, const std::string& name, const std::string& seq, int width, const std::string& path) {
  std::string buf = ">" + name + "\n";
  const std::size_t w = static_cast<std::size_t>(width), block = std::size_t{1} << 22;
  buf.reserve(block + block / w + 16);
  for (std::size_t i = 0; i < seq.size(); i += w) {
    buf.append(seq, i, w);
    buf += '\n';
    if (buf.size() >= block) {
      write_all(out, buf.data(), buf.size(), path);
      buf.clear();
    }
  }
  write_all(out, buf.data(), buf.size(), path);
}

void write_stats(const std::string& path, const sim::ContigStats& t) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw evk::InputError(path + ": cannot open for writing");
  const double acgt = static_cast<double>(t.length - t.n);
  std::fprintf(f, "#item\tcopies\tbases\tshare_of_non_N\n");
  for (int k = 0; k < sim::kKinds; ++k)
    std::fprintf(f, "%s\t%llu\t%llu\t%.4f\n", sim::kKindNames[k], static_cast<unsigned long long>(t.copies[k]),
                 static_cast<unsigned long long>(t.bases[k]), static_cast<double>(t.bases[k]) / acgt);
  std::fprintf(f, "centromere_alpha\t24\t%llu\t%.4f\n", static_cast<unsigned long long>(t.alpha),
               static_cast<double>(t.alpha) / acgt);
  std::fprintf(f, "length\t\t%llu\t\nN\t\t%llu\t%.4f (of length)\nGC\t\t%llu\t%.4f\n",
               static_cast<unsigned long long>(t.length), static_cast<unsigned long long>(t.n),
               static_cast<double>(t.n) / static_cast<double>(t.length), static_cast<unsigned long long>(t.gc),
               static_cast<double>(t.gc) / acgt);
  if (std::fclose(f) != 0) throw evk::InputError(path + ": write failed");
}

void run(const Cli& cli) {
  sim::GenomeOptions opt;
  opt.seed = cli.seed;
  opt.soft_mask = cli.soft_mask;
  if (!cli.size.empty()) opt.size = evk::parse_size(cli.size, "--size", 1000);
  const sim::GenomeModel model = sim::genome_model_make(opt);
  const bool to_stdout = cli.output == "-";
  std::FILE* out = to_stdout ? stdout : std::fopen(cli.output.c_str(), "wb");
  if (!out) throw evk::InputError(cli.output + ": cannot open for writing");
  std::vector<int> order(sim::kContigs);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return model.len[a] > model.len[b]; });
  std::vector<std::unique_ptr<std::string>> done(sim::kContigs);
  std::vector<sim::ContigStats> stats(sim::kContigs);
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  std::size_t next = 0;
  auto worker = [&] {
    for (;;) {
      std::size_t job;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next == order.size() || error) return;
        job = next++;
      }
      const int i = order[job];
      try {
        auto seq = std::make_unique<std::string>();
        sim::genome_contig_build(model, i, *seq, stats[static_cast<std::size_t>(i)]);
        std::lock_guard<std::mutex> lock(mu);
        done[static_cast<std::size_t>(i)] = std::move(seq);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      cv.notify_all();
    }
  };
  const int threads = std::clamp(cli.threads > 0 ? cli.threads : evk::default_threads(), 1, sim::kContigs);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  std::exception_ptr write_error;
  for (int i = 0; i < sim::kContigs && !write_error; ++i) {
    std::unique_ptr<std::string> seq;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done[static_cast<std::size_t>(i)] || error; });
      if (error) break;
      seq = std::move(done[static_cast<std::size_t>(i)]);
    }
    try {
      write_contig(out, sim::genome_contig_name(i), *seq, cli.width, cli.output);
    } catch (...) {
      write_error = std::current_exception();
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = write_error;
    }
  }
  for (auto& t : pool) t.join();
  const bool flushed = to_stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (error) std::rethrow_exception(error);
  if (!flushed) throw evk::InputError(cli.output + ": write failed");
  if (!cli.stats.empty()) {
    sim::ContigStats total;
    for (const auto& s : stats) total.add(s);
    write_stats(cli.stats, total);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("A deterministic human-like test genome (24 contigs, GRCh38-like lengths and structure) as FASTA.",
               "bc_human_genome");
  Cli cli;
  sim::sim_cli_common(app, cli.seed, cli.threads);
  app.add_option("-o,--output", cli.output, "FASTA output; - = standard output")->capture_default_str();
  app.add_option("--size", cli.size, "total length, e.g. 500M, 3.1G (default: GRCh38's 3,088,269,832 bp)");
  app.add_option("--width", cli.width, "FASTA line width")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_flag("--soft-mask", cli.soft_mask, "repeat copies and satellites in lower case");
  app.add_option("--stats", cli.stats, "write a TSV of the copies and bases per kind, N and GC to this file");
  app.callback([&] { run(cli); });
  return evk::run_cli(app, argc, argv);
}

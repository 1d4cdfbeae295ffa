// bc_adna_reads: ancient-DNA reads from a FASTA reference as FASTQ (plain, or gzip when OUT ends
// in .gz: one libdeflate member per 65,536 reads, made in parallel). Model and read names: adna.hpp
// and sim/README.md. The bytes depend on --seed and the options, never on --threads.
#include <libdeflate.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "adna.hpp"
#include "evk/cli.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "io/sequences.hpp"
#include "sim_cli.hpp"

namespace sim = evk::sim;

namespace {

struct Cli {
  std::string ref, output;
  std::uint64_t n = 0;
  int threads = 0, level = 6;
  sim::AdnaOptions opt;
};

std::string gzip_member(const std::string& t, int level) {
  libdeflate_compressor* z = libdeflate_alloc_compressor(level);
  if (!z) throw std::runtime_error("libdeflate: cannot allocate a compressor");
  std::string m(libdeflate_gzip_compress_bound(z, t.size()), '\0');
  m.resize(libdeflate_gzip_compress(z, t.data(), t.size(), m.data(), m.size()));
  libdeflate_free_compressor(z);
  return m;
}

void run(const Cli& cli) {
  const sim::AdnaPlan plan = sim::adna_plan(cli.opt);
  if (cli.n == 0) throw evk::InputError("N: must be > 0");
  sim::AdnaRef ref;
  for (auto& c : evk::barracuda_exact::read_reference(cli.ref)) {
    ref.names.push_back(std::move(c.name));
    ref.seqs.push_back(std::move(c.seq));
  }
  sim::adna_ref_index(ref, cli.opt.min_len, cli.ref);
  const bool to_stdout = cli.output == "-";
  const bool gz = cli.output.size() > 3 && cli.output.compare(cli.output.size() - 3, 3, ".gz") == 0;
  std::FILE* out = to_stdout ? stdout : std::fopen(cli.output.c_str(), "wb");
  if (!out) throw evk::InputError(cli.output + ": cannot open for writing");
  const std::size_t threads = static_cast<std::size_t>(cli.threads > 0 ? cli.threads : evk::default_threads());
  const std::uint64_t chunks = (cli.n + sim::kAdnaChunk - 1) / sim::kAdnaChunk;
  bool ok = true;
  for (std::uint64_t c0 = 0; c0 < chunks && ok; c0 += threads) {
    const std::uint64_t c1 = std::min<std::uint64_t>(chunks, c0 + threads);
    std::vector<std::string> text(c1 - c0);
    evk::parallel_for(
        c1 - c0,
        [&](std::size_t b, std::size_t e) {
          for (std::size_t k = b; k < e; ++k) {
            const std::uint64_t first = (c0 + k) * sim::kAdnaChunk;
            sim::adna_chunk(ref, plan, first, static_cast<std::size_t>(std::min<std::uint64_t>(sim::kAdnaChunk, cli.n - first)),
                            text[k]);
            if (gz) text[k] = gzip_member(text[k], cli.level);
          }
        },
        static_cast<int>(c1 - c0));
    for (const auto& t : text) ok = ok && std::fwrite(t.data(), 1, t.size(), out) == t.size();
  }
  ok = (to_stdout ? std::fflush(out) == 0 : std::fclose(out) == 0) && ok;
  if (!ok) throw evk::InputError(cli.output + ": write failed");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Ancient-DNA reads (short fragments, deamination, errors, contaminants) from a FASTA reference.",
               "bc_adna_reads");
  Cli cli;
  sim::AdnaOptions& o = cli.opt;
  sim::sim_cli_common(app, o.seed, cli.threads);
  app.add_option("REF", cli.ref, "reference FASTA (plain or gzip)")->required();
  app.add_option("N", cli.n, "number of reads")->required();
  app.add_option("OUT", cli.output, "FASTQ output (.gz: gzip); - = standard output (plain)")->required();
  app.add_option("--median", o.median, "median fragment (read) length")->capture_default_str();
  app.add_option("--sigma", o.sigma, "log-normal sigma of the lengths")->capture_default_str();
  app.add_option("--min-len", o.min_len, "shortest read (shorter fragments are drawn again)")->capture_default_str();
  app.add_option("--max-len", o.max_len, "longest read")->capture_default_str();
  app.add_option("--deam", o.deam, "C->T (5') and G->A (3') rate at the terminal base, above the interior")
      ->capture_default_str();
  app.add_option("--deam-decay", o.decay, "lambda: rate(i) = deam * exp(-lambda * i) + interior")->capture_default_str();
  app.add_option("--deam-interior", o.interior, "deamination rate away from the ends")->capture_default_str();
  app.add_option("--error", o.error, "sequencing substitution errors per base")->capture_default_str();
  app.add_option("--contam", o.contam, "share of contaminant (random-sequence) reads")->capture_default_str();
  app.add_option("--level", cli.level, "gzip level (libdeflate)")->check(CLI::Range(1, 12))->capture_default_str();
  app.callback([&] { run(cli); });
  return evk::run_cli(app, argc, argv);
}

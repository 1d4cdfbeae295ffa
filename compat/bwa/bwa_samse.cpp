// bwa samse [-n max_occ] [-f out.sam] [-r RG_line] <prefix> <in.sai> <in.fq>: SAM from a .sai of
// exact alignments (our `bwa aln -n 0`, or the real one's), record for record as bwa 0.7.17 writes
// it: the occurrence a repeat reports is drawn with bwa's own drand48 sequence seeded with the
// index's seed, MAPQ/XT/X0/X1/XA/MD follow bwa's rules for exact hits. A .sai written for inexact
// search (aln without -n 0), one holding inexact alignments, or options this build does not
// implement (trimming, Illumina 1.3 qualities, BAM input, barcodes) fail with a message naming it.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "bwa_args.hpp"
#include "core/kernel_config.hpp"
#include "core/rand48.hpp"
#include "core/sai_samse.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/index_files.hpp"
#include "io/sai.hpp"
#include "io/exact_mapper.hpp"
#include "io/sam_writer.hpp"
#include "io/sequences.hpp"

namespace evk::bwa_compat {

namespace bcx = barracuda_exact;

int bwa_samse(int argc, char** argv) {
  int n_occ = 3;
  std::string out = "-";
  std::optional<ReadGroup> rg;
  const std::string cl = "bwa " + command_line(argc, argv);
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt(argc, argv, "hn:f:r:")) >= 0) {
    switch (c) {
      case 'h': break;
      case 'r': rg = parse_read_group(optarg); break;
      case 'n': n_occ = std::atoi(optarg); break;
      case 'f': out = optarg; break;
      default: input_error(std::string("-") + static_cast<char>(optopt), "unknown option or missing value");
    }
  }
  if (optind + 3 > argc) {
    std::fprintf(stderr, "Usage: bwa samse [-n max_occ] [-f out.sam] [-r RG_line] <prefix> <in.sai> <in.fq>\n");
    return 1;
  }
  const std::string prefix = infer_prefix(argv[optind]);
  const std::string sai_path = argv[optind + 1], reads = argv[optind + 2];

  bcx::SaiReader sai(sai_path);
  const bcx::GapOptions& o = sai.options();
  if (!(o.max_diff == 0 && o.fnr <= 0))
    throw Refused(sai_path + ": written by bwa aln for inexact search (" +
                  (o.fnr > 0 ? "-n " + std::to_string(o.fnr) : "-n " + std::to_string(o.max_diff)) +
                  "); samse for inexact alignments comes with barracuda_exact's inexact mapping, not in this build "
                  "(this drop-in reads .sai files of `bwa aln -n 0`)");
  if (o.trim_qual > 0) input_error(sai_path, "written with -q (read trimming): not implemented by the EvoKernels drop-in");
  if (o.mode & (bcx::kModeBam | bcx::kModeBamSe | bcx::kModeBamRead1 | bcx::kModeBamRead2))
    input_error(sai_path, "written for BAM input (aln -b): not implemented by the EvoKernels drop-in");
  if (o.mode & bcx::kModeIl13) input_error(sai_path, "written with -I (Illumina 1.3 qualities): not implemented by the EvoKernels drop-in");
  if (o.mode & bcx::kModeCfy) input_error(sai_path, "written with -Y (Casava filter): not implemented by the EvoKernels drop-in");
  if (o.mode >> 24) input_error(sai_path, "written with -B (barcodes): not implemented by the EvoKernels drop-in");

  std::optional<AtomicOutput> file;
  if (out != "-") file.emplace(out);
  bcx::ReadSource source(reads);
  const bcx::BwtIndex idx = bcx::read_index(prefix);
  bcx::SamOptions so;
  so.pg_id = "bwa";
  so.pg_name = "bwa";
  so.pg_version = pg_version();
  bcx::RecordOptions ro;
  ro.max_top2 = o.max_top2;
  if (rg) {
    so.rg_line = rg->line;
    ro.rg_id = rg->id;
  }
  // bwa samse writes SAM text whatever the -f name; "-" as the SamWriter's path means SAM.
  bcx::SamWriter sam("-", file ? file->temp_path().string() : "-", idx, cl, 1, so);
  bcx::Rand48 rng(idx.seed);  // bwa: srand48(bns->seed)
  bcx::ReadBatch batch;
  bcx::ExactMapped mapped(idx, ro);
  std::vector<bcx::Hit>& hits = mapped.hits;
  std::vector<bcx::SaiAln> alns;
  std::uint64_t n = 0;
  while (source.next(batch, 0x40000, std::size_t{0x40000} * 160, bcx::kMaxReadLen)) {
    hits.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!sai.next(alns))
        input_error(sai_path, "ends after " + std::to_string(n + i) + " reads; " + reads + " has more (not the .sai of these reads?)");
      try {
        hits.push_back(bcx::samse_hit(idx, alns, batch.codes.len[i], rng, n_occ));
      } catch (const InputError& e) {
        throw Refused(sai_path + ": read " + std::to_string(n + i + 1) + " (" + std::string(batch.name(i)) + "): " + e.what());
      }
    }
    sam.write_serial(batch, mapped);
    n += batch.size();
  }
  if (sai.next(alns))
    input_error(sai_path, "holds more records than " + reads + " has reads (" + std::to_string(n) + ")");
  sam.close();
  if (file) file->commit();
  std::fprintf(stderr, "[bwa_aln_core] %llu sequences have been processed (EvoKernels).\n",
               static_cast<unsigned long long>(n));
  return 0;
}

}  // namespace evk::bwa_compat

// bwa samse [-n max_occ] [-f out.sam] [-r RG_line] <prefix> <in.sai> <in.fq>: SAM from a .sai (our
// `bwa aln`'s or the real one's), record for record as bwa 0.7.17 writes it, by barracuda_exact's
// samse stage (core/samse: the primary drawn with bwa's own drand48 sequence seeded with the
// index's seed, MAPQ, CIGAR with indels, NM/MD, XT/X0/X1/XM/XO/XG, XA). Reads are trimmed as the
// .sai's -q says. Options this build does not implement (BAM input, Illumina 1.3 qualities,
// barcodes) fail with a message naming them.
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>

#include "bwa_args.hpp"
#include "core/aln_options.hpp"
#include "core/aln_search.hpp"
#include "core/kernel_config.hpp"
#include "core/samse.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/index_files.hpp"
#include "io/sai.hpp"
#include "io/aln_sam.hpp"
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

  if (o.mode & (bcx::kModeBam | bcx::kModeBamSe | bcx::kModeBamRead1 | bcx::kModeBamRead2))
    input_error(sai_path, "written for BAM input (aln -b): not implemented by the EvoKernels drop-in");
  if (o.mode & bcx::kModeIl13) input_error(sai_path, "written with -I (Illumina 1.3 qualities): not implemented by the EvoKernels drop-in");
  if (o.mode & bcx::kModeCfy) input_error(sai_path, "written with -Y (Casava filter): not implemented by the EvoKernels drop-in");
  if (o.mode >> 24) input_error(sai_path, "written with -B (barcodes): not implemented by the EvoKernels drop-in");

  std::optional<AtomicOutput> file;
  if (out != "-") file.emplace(out);
  bcx::ReadSource source(reads);
  const bcx::BwtIndex idx = bcx::read_index(prefix);
  const bcx::AlnOptions ao = bcx::aln_options_of(o);
  bcx::SamProgram prog;
  prog.id = prog.name = "bwa";
  prog.version = pg_version();
  // bwa samse writes SAM text whatever the -f name; "-" as the writer's path means SAM.
  bcx::AlnSamWriter sam("-", file ? file->temp_path().string() : "-", idx, cl,
                        rg ? bcx::ReadGroup{rg->line, rg->id} : bcx::ReadGroup{}, 1, prog);
  bcx::Rand48 rng(static_cast<std::uint32_t>(idx.seed));  // bwa: srand48(bns->seed), consumed in read order
  bcx::ReadBatch batch;
  std::vector<bcx::SaiAln> alns;
  std::uint64_t n = 0;
  while (source.next(batch, bcx::kSampeBatch, ~std::size_t{0} >> 1, bcx::kMaxReadLen)) {
    drop_empty_reads(batch);
    bcx::ReadCodes codes;
    std::vector<int> len(batch.size());
    bcx::AlnBatch hits;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      codes.add(batch.seq(i).data(), batch.seq(i).size());
      const std::string_view q = batch.qual(i);
      len[i] = bcx::trim_len(ao.trim_qual, q.empty() ? nullptr : q.data(), static_cast<int>(batch.seq(i).size()));
      if (!sai.next(alns))
        input_error(sai_path, "ends after " + std::to_string(n + i) + " reads; " + reads + " has more (not the .sai of these reads?)");
      for (const auto& a : alns) {
        bcx::Aln x;
        x.n_mm = a.n_mm, x.n_gapo = a.n_gapo, x.n_gape = a.n_gape, x.n_ins = a.n_ins, x.n_del = a.n_del;
        x.score = static_cast<int>(a.score), x.k = a.k, x.l = a.l;
        if (x.k > x.l || x.l > idx.seq_len)
          input_error(sai_path, "read " + std::to_string(n + i + 1) + " (" + std::string(batch.name(i)) + "): SA interval [" +
                                    std::to_string(x.k) + ", " + std::to_string(x.l) + "] outside the index (another index's .sai?)");
        hits.alns.push_back(x);
      }
      hits.offset.push_back(static_cast<std::uint32_t>(hits.alns.size()));
    }
    sam.write(batch, bcx::samse_batch(idx, bcx::AlnReads{&codes, &len}, hits, ao, rng, 0, n_occ));
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

// bwa sampe [-a 500] [-o 100000] [-n 3] [-N 10] [-c 1e-05] [-P] [-s] [-A] [-f out.sam] [-r RG]
//   <prefix> <in1.sai> <in2.sai> <in1.fq> <in2.fq>: paired-end SAM from two .sai files (our `bwa
// aln`'s or the real one's), record for record as bwa 0.7.17 writes it, by barracuda_exact's
// sampe stage (core/sampe: insert size per 0x40000 pairs, best pair, mate rescue by
// Smith-Waterman, paired MAPQ, XA). The search options (trimming, maximum differences) are the first
// .sai's, as in bwa. Reads files of different lengths, or an empty read, are bad input.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "bwa_args.hpp"
#include "core/aln_options.hpp"
#include "core/aln_search.hpp"
#include "core/kernel_config.hpp"
#include "core/sampe.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/aln_sam.hpp"
#include "io/index_files.hpp"
#include "io/sai.hpp"
#include "io/sequences.hpp"

namespace evk::bwa_compat {

namespace bcx = barracuda_exact;

namespace {

void check_sai_options(const std::string& path, const bcx::GapOptions& o) {
  if (o.mode & (bcx::kModeBam | bcx::kModeBamSe | bcx::kModeBamRead1 | bcx::kModeBamRead2))
    input_error(path, "written for BAM input (aln -b): not implemented by the EvoKernels drop-in");
  if (o.mode & bcx::kModeIl13) input_error(path, "written with -I (Illumina 1.3 qualities): not implemented by the EvoKernels drop-in");
  if (o.mode & bcx::kModeCfy) input_error(path, "written with -Y (Casava filter): not implemented by the EvoKernels drop-in");
  if (o.mode >> 24) input_error(path, "written with -B (barcodes): not implemented by the EvoKernels drop-in");
}

// One end of a batch: codes, searched lengths and the .sai's alignments of its reads.
void load_end(const bcx::ReadBatch& b, bcx::SaiReader& sai, const std::string& sai_path, const bcx::BwtIndex& idx,
              const bcx::AlnOptions& ao, std::uint64_t first, bcx::ReadCodes& codes, std::vector<int>& len,
              bcx::AlnBatch& hits) {
  std::vector<bcx::SaiAln> alns;
  len.resize(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    codes.add(b.seq(i).data(), b.seq(i).size());
    const std::string_view q = b.qual(i);
    len[i] = bcx::trim_len(ao.trim_qual, q.empty() ? nullptr : q.data(), static_cast<int>(b.seq(i).size()));
    if (!sai.next(alns))
      input_error(sai_path, "ends after " + std::to_string(first + i) + " reads (not the .sai of these reads?)");
    for (const auto& a : alns) {
      bcx::Aln x;
      x.n_mm = a.n_mm, x.n_gapo = a.n_gapo, x.n_gape = a.n_gape, x.n_ins = a.n_ins, x.n_del = a.n_del;
      x.score = static_cast<int>(a.score), x.k = a.k, x.l = a.l;
      if (x.k > x.l || x.l > idx.seq_len)
        input_error(sai_path, "read " + std::to_string(first + i + 1) + " (" + std::string(b.name(i)) + "): SA interval outside the index");
      hits.alns.push_back(x);
    }
    hits.offset.push_back(static_cast<std::uint32_t>(hits.alns.size()));
  }
}

}  // namespace

int bwa_sampe(int argc, char** argv) {
  bcx::PeOptions pe;
  std::string out = "-";
  std::optional<ReadGroup> rg;
  const std::string cl = "bwa " + command_line(argc, argv);
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt(argc, argv, "a:o:sPn:N:c:f:Ar:")) >= 0) {
    switch (c) {
      case 'r': rg = parse_read_group(optarg); break;
      case 'a': pe.max_isize = std::atoi(optarg); break;
      case 'o': pe.max_occ = std::atoi(optarg); break;
      case 's': pe.sw = false; break;
      case 'P': break;  // preload the index: how, not what
      case 'n': pe.n_multi = std::atoi(optarg); break;
      case 'N': pe.N_multi = std::atoi(optarg); break;
      case 'c': pe.ap_prior = std::atof(optarg); break;
      case 'f': out = optarg; break;
      case 'A': pe.force_isize = true; break;
      default: input_error(std::string("-") + static_cast<char>(optopt), "unknown option or missing value");
    }
  }
  if (optind + 5 > argc) {
    std::fprintf(stderr, "Usage: bwa sampe [options] <prefix> <in1.sai> <in2.sai> <in1.fq> <in2.fq>\n");
    return 1;
  }
  const std::string prefix = infer_prefix(argv[optind]);
  const std::string sai1_path = argv[optind + 1], sai2_path = argv[optind + 2];
  const std::string reads1 = argv[optind + 3], reads2 = argv[optind + 4];
  bcx::SaiReader sai1(sai1_path), sai2(sai2_path);
  check_sai_options(sai1_path, sai1.options());
  check_sai_options(sai2_path, sai2.options());
  const bcx::AlnOptions ao = bcx::aln_options_of(sai1.options());  // bwa: the first .sai's options

  std::optional<AtomicOutput> file;
  if (out != "-") file.emplace(out);
  bcx::ReadSource src1(reads1), src2(reads2);
  const bcx::BwtIndex idx = bcx::read_index(prefix);
  bcx::SamProgram prog;
  prog.id = prog.name = "bwa";
  prog.version = pg_version();
  bcx::AlnSamWriter sam("-", file ? file->temp_path().string() : "-", idx, cl,
                        rg ? bcx::ReadGroup{rg->line, rg->id} : bcx::ReadGroup{}, 1, prog);
  bcx::Rand48 rng(static_cast<std::uint32_t>(idx.seed));  // bwa: srand48(bns->seed)
  bcx::IsizeInfo last;
  bcx::ReadBatch b1, b2;
  std::uint64_t n = 0;
  for (;;) {
    const bool more1 = src1.next(b1, bcx::kSampeBatch, ~std::size_t{0} >> 1, bcx::kMaxReadLen);
    const bool more2 = src2.next(b2, bcx::kSampeBatch, ~std::size_t{0} >> 1, bcx::kMaxReadLen);
    if (more1 != more2 || b1.size() != b2.size()) {
      const bool short1 = b1.size() < b2.size() || (!more1 && more2);
      input_error(short1 ? reads1 : reads2,
                  "has fewer reads than " + (short1 ? reads2 : reads1) + " (paired files must have the same number of reads)");
    }
    if (!more1) break;
    for (const auto* b : {&b1, &b2})
      for (std::size_t i = 0; i < b->size(); ++i)
        if (b->seq(i).empty())
          input_error(b == &b1 ? reads1 : reads2, "read " + std::string(b->name(i)) + " is empty (paired reads need bases)");
    bcx::ReadCodes c1, c2;
    std::vector<int> l1, l2;
    bcx::AlnBatch a1, a2;
    load_end(b1, sai1, sai1_path, idx, ao, n, c1, l1, a1);
    load_end(b2, sai2, sai2_path, idx, ao, n, c2, l2, a2);
    bcx::SampeResult r = bcx::sampe_batch(idx, bcx::AlnReads{&c1, &l1}, bcx::AlnReads{&c2, &l2}, a1, a2, ao, pe, rng, last);
    last = r.isize;
    sam.write_pairs(b1, b2, r.rec1, r.rec2);
    n += b1.size();
  }
  std::vector<bcx::SaiAln> rest;
  if (sai1.next(rest)) input_error(sai1_path, "holds more records than " + reads1 + " has reads (" + std::to_string(n) + ")");
  if (sai2.next(rest)) input_error(sai2_path, "holds more records than " + reads2 + " has reads (" + std::to_string(n) + ")");
  sam.close();
  if (file) file->commit();
  std::fprintf(stderr, "[bwa_sai2sam_pe_core] %llu sequences have been processed (EvoKernels).\n",
               static_cast<unsigned long long>(2 * n));
  return 0;
}

}  // namespace evk::bwa_compat

// bwa aln [options] <prefix> <in.fq>: bwa aln's inexact search (barracuda_exact's bounded
// backtracking, the same hits as bwa 0.7.17; on the GPU when one is usable, $EVK_BACKEND), written
// as bwa 0.7.17's .sai with bwa's options block, so that the real `bwa samse`/`sampe` read it. Every
// bwa aln option is parsed as bwa parses it (-n -o -e -i -d -l -k -m -t -M -O -E -R -L -N -q) and
// written to the .sai as bwa writes it. Not implemented (fails naming it): BAM input -b/-0/-1/-2,
// -I, -Y, -B.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "bwa_args.hpp"
#include "core/aln_gpu.hpp"
#include "core/aln_options.hpp"
#include "core/aln_search.hpp"
#include "core/kernel_config.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/index_files.hpp"
#include "io/sai.hpp"
#include "io/sequences.hpp"

namespace evk::bwa_compat {

namespace bcx = barracuda_exact;

namespace {

int aln_usage(const bcx::GapOptions& o) {
  std::fprintf(stderr,
               "\nUsage:   bwa aln [options] <prefix> <in.fq>   (EvoKernels drop-in)\n\n"
               "Options: -n NUM    max #diff (int) or missing prob under 0.02 err rate (float) [%.2f]\n"
               "         -o INT    maximum number or fraction of gap opens [%d]\n"
               "         -e INT    maximum number of gap extensions, -1 for disabling long gaps [-1]\n"
               "         -i INT    do not put an indel within INT bp towards the ends [%d]\n"
               "         -d INT    maximum occurrences for extending a long deletion [%d]\n"
               "         -l INT    seed length [%d]\n"
               "         -k INT    maximum differences in the seed [%d]\n"
               "         -m INT    maximum entries in the queue [%d]\n"
               "         -t INT    number of threads [%d]\n"
               "         -M INT    mismatch penalty [%d]\n"
               "         -O INT    gap open penalty [%d]\n"
               "         -E INT    gap extension penalty [%d]\n"
               "         -R INT    stop searching when there are >INT equally best hits [%d]\n"
               "         -f FILE   file to write output to instead of stdout\n"
               "         -L        log-scaled gap penalty for long deletions\n"
               "         -N        non-iterative mode: search for all n-difference hits\n"
               "         -q INT    quality threshold for read trimming down to 35bp [0]\n"
               "Not in this build: -B, -b, -0, -1, -2, -I, -Y\n"
               "Environment: EVK_BACKEND=auto|cpu|gpu, EVK_DEVICE, EVK_KERNEL\n\n",
               o.fnr, o.max_gapo, o.indel_end_skip, o.max_del_occ, o.seed_len, o.max_seed_diff, o.max_entries,
               o.n_threads, o.s_mm, o.s_gapo, o.s_gape, o.max_top2);
  return 1;
}

}  // namespace

int bwa_aln(int argc, char** argv) {
  bcx::GapOptions o;
  int opte = -1;
  std::string out = "-";
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt(argc, argv, "n:o:e:i:d:l:k:LR:m:t:NM:O:E:q:f:b012IYB:")) >= 0) {
    switch (c) {
      case 'n':
        if (std::strstr(optarg, ".")) o.fnr = static_cast<float>(std::atof(optarg)), o.max_diff = -1;
        else o.max_diff = std::atoi(optarg), o.fnr = -1.0f;
        break;
      case 'o': o.max_gapo = std::atoi(optarg); break;
      case 'e': opte = std::atoi(optarg); break;
      case 'M': o.s_mm = std::atoi(optarg); break;
      case 'O': o.s_gapo = std::atoi(optarg); break;
      case 'E': o.s_gape = std::atoi(optarg); break;
      case 'd': o.max_del_occ = std::atoi(optarg); break;
      case 'i': o.indel_end_skip = std::atoi(optarg); break;
      case 'l': o.seed_len = std::atoi(optarg); break;
      case 'k': o.max_seed_diff = std::atoi(optarg); break;
      case 'm': o.max_entries = std::atoi(optarg); break;
      case 't': o.n_threads = std::atoi(optarg); break;
      case 'L': o.mode |= bcx::kModeLogGap; break;
      case 'R': o.max_top2 = std::atoi(optarg); break;
      case 'q': o.trim_qual = std::atoi(optarg); break;
      case 'N': o.mode |= bcx::kModeNonstop, o.max_top2 = 0x7fffffff; break;
      case 'f': out = optarg; break;
      case 'b': case '0': case '1': case '2':
        input_error(std::string("-") + static_cast<char>(c), "BAM input is not implemented by the EvoKernels drop-in");
      case 'I': input_error("-I", "Illumina 1.3 qualities are not implemented by the EvoKernels drop-in");
      case 'Y': input_error("-Y", "Casava filtering is not implemented by the EvoKernels drop-in");
      case 'B': input_error("-B", "barcodes are not implemented by the EvoKernels drop-in");
      default: input_error(std::string("-") + static_cast<char>(optopt), "unknown option or missing value");
    }
  }
  if (opte > 0) {
    o.max_gape = opte;
    o.mode &= ~bcx::kModeGape;
  }
  if (optind + 2 > argc) return aln_usage(o);
  const int threads = o.n_threads < 1 ? 1 : o.n_threads;  // bwa: fewer than one thread runs one
  const bcx::AlnOptions ao = bcx::aln_options_of(o);
  const std::string prefix = infer_prefix(argv[optind]);
  const std::string reads = argv[optind + 1];

  std::optional<AtomicOutput> file;
  if (out != "-") file.emplace(out);
  bcx::ReadSource source(reads);
  const bcx::BwtIndex idx = bcx::read_index(prefix);

  const CommonOptions co = backend_from_env();
  const BackendChoice be = choose_backend(co);
#if defined(EVK_HAVE_CUDA)
  std::unique_ptr<bcx::GpuAligner> gpu;
  if (be.backend == Backend::gpu) gpu = std::make_unique<bcx::GpuAligner>(idx, ao, be.device.index);
#endif
  bcx::SaiWriter sai(out == "-" ? "stdout" : out, file ? file->temp_path().string() : "-", o);
  bcx::ReadBatch batch;
  std::uint64_t n = 0;
  // bwa aln's batches (0x40000 reads): the gap-open limit is set per batch by its longest read.
  while (source.next(batch, bcx::kSampeBatch, ~std::size_t{0} >> 1, bcx::kMaxReadLen)) {
    drop_empty_reads(batch);
    bcx::ReadCodes codes;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const std::string_view q = batch.qual(i);
      const int len = bcx::trim_len(ao.trim_qual, q.empty() ? nullptr : q.data(), static_cast<int>(batch.seq(i).size()));
      codes.add(batch.seq(i).data(), batch.seq(i).size());
      codes.len.back() = static_cast<std::uint32_t>(len);
    }
    bcx::AlnBatch alns;
#if defined(EVK_HAVE_CUDA)
    if (gpu) alns = gpu->search(codes, threads);
    else
#endif
      alns = bcx::aln_search_batch(idx, codes, ao, threads);
    std::vector<bcx::SaiAln> rec;
    for (std::size_t i = 0; i < alns.size(); ++i) {
      rec.clear();
      for (const bcx::Aln* a = alns.begin(i); a != alns.begin(i) + alns.count(i); ++a)
        rec.push_back({a->k, a->l, a->n_mm, a->n_gapo, a->n_gape, static_cast<std::uint32_t>(a->score), a->n_ins, a->n_del});
      sai.write(rec);
    }
    n += batch.size();
  }
  sai.close();
  if (file) file->commit();
  std::fprintf(stderr, "[bwa_aln_core] %llu sequences have been processed (EvoKernels, %s).\n",
               static_cast<unsigned long long>(n), be.backend == Backend::gpu ? be.device.name.c_str() : "CPU");
  return 0;
}

}  // namespace evk::bwa_compat

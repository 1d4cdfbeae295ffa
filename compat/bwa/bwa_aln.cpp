// bwa aln [options] <prefix> <in.fq>: exact matching (bwa aln -n 0) by barracuda_exact, on the GPU
// when one is usable ($EVK_BACKEND), written as bwa 0.7.17's .sai with bwa's options block, so
// that the real `bwa samse` reads it. Every bwa aln option is parsed as bwa parses it and written
// to the .sai as bwa writes it; with -n 0 (at most 0 differences) the search options (-o -e -i -d
// -l -k -m -M -O -E -R -L -N) cannot change which alignments exist. What needs inexact search
// (-n > 0 or a missing-probability -n, bwa's default 0.04) or is not implemented (-q trimming,
// BAM input -b/-0/-1/-2, -I, -Y, -B) fails with a message naming it.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "bwa_args.hpp"
#include "core/gpu_exact.hpp"
#include "core/kernel_config.hpp"
#include "core/kernel_variant.hpp"
#include "core/match.hpp"
#include "core/sai_samse.hpp"
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
               "\nUsage:   bwa aln [options] <prefix> <in.fq>   (EvoKernels drop-in: exact matches, -n 0)\n\n"
               "Options: -n NUM    max #diff (int) or missing prob under 0.02 err rate (float) [%.2f]; this build: 0\n"
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
               "Not in this build: -q (trimming), -B, -b, -0, -1, -2, -I, -Y\n"
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
      case 'q':
        o.trim_qual = std::atoi(optarg);
        if (o.trim_qual > 0) input_error("-q", "quality trimming is not implemented by the EvoKernels drop-in");
        break;
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
  if (!(o.max_diff == 0 && o.fnr <= 0))
    throw Refused(std::string("inexact search (-n ") + (o.fnr > 0 ? std::to_string(o.fnr) : std::to_string(o.max_diff)) +
                  (o.fnr > 0 && o.max_diff < 0 ? ", bwa's default" : "") +
                  ") is not in this EvoKernels build (it comes with barracuda_exact's inexact mapping); this drop-in "
                  "maps exactly: use -n 0");
  const int threads = o.n_threads < 1 ? 1 : o.n_threads;  // bwa: fewer than one thread runs one
  const std::string prefix = infer_prefix(argv[optind]);
  const std::string reads = argv[optind + 1];

  std::optional<AtomicOutput> file;
  if (out != "-") file.emplace(out);
  bcx::ReadSource source(reads);
  const bcx::BwtIndex idx = bcx::read_index(prefix);

  const CommonOptions co = backend_from_env();
  const BackendChoice be = choose_backend(co);
#if defined(EVK_HAVE_CUDA)
  std::unique_ptr<bcx::GpuMatcher> gpu;
  if (be.backend == Backend::gpu) {
    Registry reg = bcx::make_registry();
    reg.load_overlay(default_overlay_dir());
    const Selection sel =
        reg.select("barracuda_exact", DeviceKey{be.device.cc(), be.device.name}, co.kernel, bcx::make_request(idx.l_pac));
    const bcx::KernelVariant kv = bcx::resolve_kernel_variant(sel.variant);
    gpu = std::make_unique<bcx::GpuMatcher>(idx, kv.config, be.device.index, kv.source);
  }
#endif
  bcx::SaiWriter sai(out == "-" ? "stdout" : out, file ? file->temp_path().string() : "-", o);
  bcx::ReadBatch batch;
  std::uint64_t n = 0;
  while (source.next(batch, 0x40000, std::size_t{0x40000} * 160, bcx::kMaxReadLen)) {
    const bcx::ReadCodes& codes = batch.codes;
    std::vector<bcx::KL> kl;
#if defined(EVK_HAVE_CUDA)
    if (gpu) {
      bcx::PackedReads packed;
      bcx::pack_reads(codes, packed);
      kl = gpu->match(packed);
    } else
#endif
      kl = bcx::match_cpu(idx, codes, threads);
    for (const auto& x : kl) sai.write(bcx::exact_alns(x));
    n += batch.size();
  }
  sai.close();
  if (file) file->commit();
  std::fprintf(stderr, "[bwa_aln_core] %llu sequences have been processed (EvoKernels, %s).\n",
               static_cast<unsigned long long>(n), be.backend == Backend::gpu ? be.device.name.c_str() : "CPU");
  return 0;
}

}  // namespace evk::bwa_compat

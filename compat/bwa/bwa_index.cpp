// bwa index [-a bwtsw|is|rb2] [-p PREFIX] [-b INT] <in.fasta>: barracuda_exact's index builder,
// whose five files are byte-identical to bwa 0.7.17's (the algorithm choice and block size only
// change how bwa builds the same BWT); the suffixes are sorted on the GPU when one is usable
// ($EVK_BACKEND, $EVK_DEVICE as the other drop-ins).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "bwa_args.hpp"
#include "core/index.hpp"
#include "evk/error.hpp"
#include "io/index_files.hpp"
#include "io/sequences.hpp"

namespace evk::bwa_compat {

int bwa_index(int argc, char** argv) {
  std::string prefix, algo;
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt(argc, argv, "6a:p:b:")) >= 0) {
    switch (c) {
      case 'a':
        algo = optarg;
        if (algo != "bwtsw" && algo != "is" && algo != "rb2") input_error("-a " + algo, "unknown algorithm");
        break;
      case 'p': prefix = optarg; break;
      case 'b': break;  // block size of bwa's bwtsw construction: no effect on the files
      case '6': input_error("-6", "the .64 index naming (ALT contigs) is not implemented by the EvoKernels drop-in");
      default: input_error(std::string("-") + static_cast<char>(optopt), "unknown option or missing value");
    }
  }
  if (optind + 1 > argc) {
    std::fprintf(stderr, "\nUsage:   bwa index [options] <in.fasta>\n\n"
                         "Options: -a STR    BWT construction algorithm: bwtsw, is or rb2 [auto]\n"
                         "         -p STR    prefix of the index [same as fasta name]\n"
                         "         -b INT    block size for the bwtsw algorithm (no effect here)\n\n");
    return 1;
  }
  const std::string fasta = argv[optind];
  if (prefix.empty()) prefix = fasta;
  const auto seqs = barracuda_exact::read_reference(fasta);
  const BackendChoice be = choose_backend(backend_from_env());  // the suffix sort on the GPU when usable
  barracuda_exact::IndexOptions io;
  if (be.backend == Backend::gpu) io.devices = {be.device.index};
  barracuda_exact::IndexReport rep;
  const barracuda_exact::BwtIndex idx = barracuda_exact::build_index(seqs, io, &rep);
  if (!rep.fallback.empty()) std::fprintf(stderr, "[bwa_index] %s; sorted on the CPU\n", rep.fallback.c_str());
  barracuda_exact::write_index(idx, prefix);
  std::fprintf(stderr, "[bwa_index] %s: %zu sequences, %lld bp indexed (EvoKernels)\n", prefix.c_str(),
               idx.contigs.size(), static_cast<long long>(idx.l_pac));
  return 0;
}

}  // namespace evk::bwa_compat

// bwa, the drop-in: bwa 0.7.17's command line over barracuda_exact, installed off PATH in
// <prefix>/lib/evokernels/bwa (a pipeline opts in with PATH=<prefix>/lib/evokernels/bwa:$PATH).
// `index` (byte-identical index files), `aln` (bwa aln's inexact search; bwa's .sai format, byte
// for byte, so the real `bwa samse`/`sampe` read it), `samse` and `sampe` (read our or bwa's .sai
// files; the same SAM records as bwa). Other commands fail with a message saying so.
#include <cstdio>
#include <cstring>
#include <string>

#include "bwa_args.hpp"

namespace bc = evk::bwa_compat;

namespace {

int usage() {
  std::fprintf(stderr,
               "\nProgram: bwa (EvoKernels drop-in following bwa %s; %s)\n"
               "Version: %s\n\n"
               "Usage:   bwa <command> [options]\n\n"
               "Command: index         index sequences in the FASTA format\n"
               "         aln           gapped/ungapped alignment\n"
               "         samse         generate alignment (single ended)\n"
               "         sampe         generate alignment (paired ended)\n\n",
               bc::kBwaVersion, "GPU exact matching by barracuda_exact", bc::pg_version().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string cmd = argv[1];
  if (cmd == "index") return bc::run("bwa index", bc::bwa_index, argc - 1, argv + 1);
  if (cmd == "aln") return bc::run("bwa aln", bc::bwa_aln, argc - 1, argv + 1);
  if (cmd == "samse") return bc::run("bwa samse", bc::bwa_samse, argc - 1, argv + 1);
  if (cmd == "sampe") return bc::run("bwa sampe", bc::bwa_sampe, argc - 1, argv + 1);
  if (cmd == "version" || cmd == "--version") {
    std::printf("%s\n", bc::pg_version().c_str());
    return 0;
  }
  std::fprintf(stderr, "bwa: '%s' is not provided by the EvoKernels drop-in (it provides index, aln, samse, sampe); "
                       "use the real bwa\n", cmd.c_str());
  return 1;
}

// barracuda_exact without htslib: only `devices` (index/map need htslib for FASTA/FASTQ/SAM/BAM).
#include "evk/cli.hpp"

int main(int argc, char** argv) {
  auto app = evk::make_app("barracuda_exact", "Exact short-read mapping on a BWA index (built without htslib: devices only)");
  evk::add_devices_command(*app, "barracuda_exact", [] {
    evk::Registry reg;
    reg.add_kernel("barracuda_exact");
    return reg;
  });
  return evk::run_cli(*app, argc, argv);
}

// Shared parts of the bwa drop-in (bwa 0.7.17's command line over barracuda_exact): versions,
// index prefix inference, read-group lines, the backend choice and the error conventions.
#pragma once
#include <string>

#include "evk/cli.hpp"
#include "io/sequences.hpp"

namespace evk::bwa_compat {

// The bwa version whose command line and file formats this follows, and ours.
constexpr const char* kBwaVersion = "0.7.17";
std::string pg_version();  // "0.7.17-evokernels-<version>" for @PG VN

// bwa_idx_infer_prefix: HINT.64.bwt -> "HINT.64", HINT.bwt -> "HINT"; InputError otherwise.
std::string infer_prefix(const std::string& hint);

// bwa_set_rg: "@RG\tID:x\t..." with \t, \n, \\ escapes -> the header line and its ID.
struct ReadGroup {
  std::string line, id;
};
ReadGroup parse_read_group(const std::string& arg);

// The backend for the GPU-capable steps: $EVK_BACKEND (auto | cpu | gpu; bwa's command line has
// no place for it), device $EVK_DEVICE; kernel variant $EVK_KERNEL (auto | original | evolved | FILE).
CommonOptions backend_from_env();

// bwa aln/samse skip empty reads (no .sai entry, no SAM record): the same here.
void drop_empty_reads(barracuda_exact::ReadBatch& b);

// The full command line, for @PG CL.
std::string command_line(int argc, char** argv);

// Runs a subcommand with EvoKernels' error conventions ("bwa <cmd>: message", exit 2 for bad input
// or usage, 1 for what this build cannot do or internal failures).
int run(const char* name, int (*body)(int, char**), int argc, char** argv);

int bwa_index(int argc, char** argv);
int bwa_aln(int argc, char** argv);
int bwa_samse(int argc, char** argv);
int bwa_sampe(int argc, char** argv);

}  // namespace evk::bwa_compat

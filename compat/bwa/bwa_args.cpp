#include "bwa_args.hpp"

#include <utility>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "evk/atomic_file.hpp"
#include "evk/cuda_check.hpp"
#include "evk/error.hpp"
#include "evk/main_guard.hpp"

#ifndef EVK_VERSION
#define EVK_VERSION "0.0.0"
#endif

namespace evk::bwa_compat {

void drop_empty_reads(barracuda_exact::ReadBatch& b) {
  bool any = false;
  for (std::size_t i = 0; i < b.size() && !any; ++i) any = b.codes.len[i] == 0;
  if (!any) return;
  barracuda_exact::ReadBatch kept;
  kept.first = b.first;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (b.codes.len[i] != 0) kept.add(b, i);
  b = std::move(kept);
}

std::string pg_version() { return std::string(kBwaVersion) + "-evokernels-" + EVK_VERSION; }

std::string infer_prefix(const std::string& hint) {
  std::error_code ec;
  if (std::filesystem::exists(hint + ".64.bwt", ec)) return hint + ".64";
  if (std::filesystem::exists(hint + ".bwt", ec)) return hint;
  input_error(hint, "fail to locate the index (no " + hint + ".bwt; run bwa index first)");
}

ReadGroup parse_read_group(const std::string& arg) {
  if (arg.rfind("@RG", 0) != 0) input_error("-r " + arg, "the read group line is not started with @RG");
  if (arg.find('\t') != std::string::npos)
    input_error("-r", "the read group line contained literal <tab> characters -- replace with escaped tabs: \\t");
  ReadGroup rg;
  for (std::size_t i = 0; i < arg.size(); ++i) {
    if (arg[i] == '\\' && i + 1 < arg.size()) {
      const char c = arg[++i];
      rg.line.push_back(c == 't' ? '\t' : c == 'n' ? '\n' : c);  // bwa_escape: \t, \n, \\ (others: the char)
    } else {
      rg.line.push_back(arg[i]);
    }
  }
  const auto p = rg.line.find("\tID:");
  if (p == std::string::npos) input_error("-r " + arg, "no ID within the read group line");
  for (std::size_t q = p + 4; q < rg.line.size() && rg.line[q] != '\t' && rg.line[q] != '\n'; ++q)
    rg.id.push_back(rg.line[q]);
  if (rg.id.size() > 255) input_error("-r", "@RG:ID is longer than 255 characters");
  return rg;
}

CommonOptions backend_from_env() {
  CommonOptions o;
  if (const char* b = std::getenv("EVK_BACKEND"); b && *b) o.backend = b;
  if (o.backend != "auto" && o.backend != "cpu" && o.backend != "gpu")
    input_error("EVK_BACKEND=" + o.backend, "must be auto, cpu or gpu");
  if (const char* d = std::getenv("EVK_DEVICE"); d && *d) o.device = std::atoi(d);
  if (const char* k = std::getenv("EVK_KERNEL"); k && *k) o.kernel = k;
  return o;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

int run(const char* name, int (*body)(int, char**), int argc, char** argv) {
  return run_guarded(name, [&] { return body(argc, argv); });
}

}  // namespace evk::bwa_compat

#include "nr_cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>

#include "evk/atomic_file.hpp"
#include "evk/cuda_check.hpp"
#include "evk/error.hpp"
#include "evk/main_guard.hpp"

#ifndef EVK_VERSION
#define EVK_VERSION "0.0.0"
#endif

namespace evk::niftyreg_compat {

std::string version_string() { return std::string("2.0.0+evokernels.") + EVK_VERSION; }

int Parsed::integer(const std::string& name, int dflt) const {
  return has(name) ? std::atoi(str(name).c_str()) : dflt;
}
double Parsed::real(const std::string& name, double dflt) const {
  return has(name) ? std::atof(str(name).c_str()) : dflt;
}

std::vector<Option> common_options() {
  return {
      {{"-voff", "--voff"}, 0, "Turns verbose off [on]", ""},
      {{"-omp", "--omp"}, 1, "Number of CPU threads [all cores]", ""},
      {{"-platf", "--platf"}, 1, "Platform: CPU=0 | CUDA=1 [auto: the GPU when one is usable]", ""},
      {{"-gpuid", "--gpuid"}, 1, "Id of the GPU to use with -platf 1 [0]", ""},
  };
}

static void usage(const Command& c) {
  std::printf("%s (EvoKernels drop-in for NiftyReg %s): %s\n", c.name.c_str(), version_string().c_str(),
              c.summary.c_str());
  std::printf("Usage:\t%s %s\n", c.name.c_str(), c.usage.c_str());
  for (const auto& o : c.options) {
    std::string names;
    for (const auto& n : o.names) names += (names.empty() ? "" : " | ") + n;
    std::printf("\t%s%s\n\t\t%s\n", names.c_str(), o.nargs == 0 ? "" : o.nargs == 1 ? " <value>" : " <values>",
                o.help.c_str());
    if (!o.missing.empty()) std::printf("\t\t(not in this build: %s)\n", o.missing.c_str());
  }
  std::printf("\t-h | --help\n\t\tThis help\n\t--version\n\t\tPrint the NiftyReg version followed and exit (%s)\n",
              version_string().c_str());
}

bool parse(const Command& cmd, int argc, char** argv, Parsed& out, int& exit_code) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "-H" || a == "-help" || a == "--help" || a == "-HELP" || a == "--HELP" || a == "-Help" ||
        a == "--Help") {
      usage(cmd);
      exit_code = 0;
      return false;
    }
    if (a == "-version" || a == "-Version" || a == "-V" || a == "-v" || a == "--v" || a == "--version") {
      std::printf("%s\n", version_string().c_str());
      exit_code = 0;
      return false;
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const Option* opt = nullptr;
    for (const auto& o : cmd.options)
      for (const auto& n : o.names)
        if (n == a) opt = &o;
    if (!opt) input_error(a, "unknown option (see " + cmd.name + " -h)");
    if (!opt->missing.empty()) input_error(a, "not implemented by the EvoKernels drop-in " + cmd.name + ": " + opt->missing);
    std::vector<std::string> vals;
    out.position[opt->names.front()] = i;
    for (int k = 0; k < opt->nargs; ++k) {
      if (i + 1 >= argc) input_error(a, "expects " + std::to_string(opt->nargs) + " value(s)");
      vals.push_back(argv[++i]);
    }
    out.values[opt->names.front()] = vals;
  }
  return true;
}

Platform platform_of(const Parsed& p) {
  Platform pl;
  if (p.has("-platf")) {
    const int v = p.integer("-platf", 0);
    if (v == 0) pl.backend = "cpu";
    else if (v == 1) pl.backend = "gpu";
    else input_error("-platf " + p.str("-platf"), "expected 0 (CPU) or 1 (CUDA)");
  }
  pl.device = p.integer("-gpuid", 0);
  if (pl.device < 0) input_error("-gpuid", "must be >= 0");
  pl.threads = p.integer("-omp", 0);
  if (pl.threads < 0) input_error("-omp", "must be >= 0");
  pl.verbose = !p.has("-voff");
  return pl;
}

int run(const Command& cmd, int argc, char** argv, void (*body)(const Parsed&)) {
  return run_guarded(cmd.name, [&] {
    Parsed p;
    int code = 0;
    if (!parse(cmd, argc, argv, p, code)) return code;
    body(p);
    return static_cast<int>(kExitOk);
  });
}

}  // namespace evk::niftyreg_compat

// NiftyReg 2.0's command-line conventions for the drop-in commands: single-dash options (and the
// double-dash and legacy aliases NiftyReg accepts), values read as NiftyReg reads them (atoi/atof),
// `-h`/`--help`, `--version` printing the NiftyReg CLI version followed (nipype parses it), and the
// EvoKernels rules: an unknown option, a missing value or an option this build does not implement
// fails with one line naming it, exit 2.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace evk::niftyreg_compat {

// The NiftyReg command-line version these commands follow, with our build as a PEP 440 local
// label (nipype's version check reads it): "2.0.0+evokernels.<version>".
std::string version_string();

struct Option {
  std::vector<std::string> names;  // first = canonical, e.g. {"-ref", "-target", "--ref"}
  int nargs = 0;                   // values taken
  std::string help;                // with NiftyReg's default in brackets
  std::string missing;             // non-empty: accepted by NiftyReg, not by this build (why)
};

struct Parsed {
  std::map<std::string, std::vector<std::string>> values;  // canonical name -> values (last one wins)
  std::map<std::string, int> position;                      // canonical name -> argv index of its last use
  bool has(const std::string& name) const { return values.count(name) != 0; }
  const std::string& str(const std::string& name) const { return values.at(name).front(); }
  int integer(const std::string& name, int dflt) const;  // atoi, as NiftyReg
  double real(const std::string& name, double dflt) const;  // atof, as NiftyReg
};

struct Command {
  std::string name;     // e.g. "reg_resample"
  std::string summary;  // one line
  std::string usage;    // e.g. "-ref <filename> -flo <filename> [OPTIONS]"
  std::vector<Option> options;
};

// -h/--help and --version (exit 0) are handled here; returns false when the caller should exit
// with `exit_code`. Unknown options, missing values and unimplemented options throw InputError.
bool parse(const Command& cmd, int argc, char** argv, Parsed& out, int& exit_code);

// Runs `body` with the EvoKernels error conventions (one line "<name>: message", exit 2 for bad
// input, 1 otherwise).
int run(const Command& cmd, int argc, char** argv, void (*body)(const Parsed&));

// The common options every NiftyReg command takes: -voff, -omp N, -platf N, -gpuid N.
std::vector<Option> common_options();

// --backend from -platf (0 CPU, 1 CUDA; absent: auto) and the device from -gpuid.
struct Platform {
  std::string backend = "auto";
  int device = 0;
  int threads = 0;  // -omp (0 = all cores)
  bool verbose = true;
};
Platform platform_of(const Parsed& p);

}  // namespace evk::niftyreg_compat

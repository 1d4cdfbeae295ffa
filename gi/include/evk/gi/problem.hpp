// The contract between the GI engine and an app. The engine knows nothing about stereo, B-splines
// or DNA: each app implements evk::gi::Problem (in apps/<app>/core/gi_problem.*) and the engine
// evolves the problem's kernel source against it.
//
// A candidate = the kernel source after the genome's edits + a value for every config parameter.
// The engine compiles it with NVRTC using compile_options(config) and hands the loaded kernel to
// an Evaluation, which owns one case on the GPU and its CPU reference answer.
//
// Cases come in size classes (size_classes(): the problem sizes users meet, e.g. stereo's 320x240
// paper case and 1920x1080 frames); `gi run --class` trains on one, otherwise generations cycle
// through them, and `gi validate` reports per class. A configuration may limit what a variant can
// run (constraints(): "max_disparity <= 253"); those become the genome file's `requires` lines.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace evk::gi {

// Values of the fixed part (config parameters), by name, as text ("64", "true", "GLOBAL").
using Config = std::map<std::string, std::string>;

// One configuration parameter of the papers' "fixed part".
struct ConfigParam {
  enum class Kind { boolean, number, choice };
  std::string name;                 // e.g. "BLOCK_W", "constantBasis", "STORE_disparityPixel"
  Kind kind = Kind::boolean;
  std::vector<std::string> values;  // allowed values in order (numbers ascending: "neighbour" moves
                                    // step along this list); booleans: {"false","true"}
  std::string default_value;        // the human-written kernel's setting
  std::string help;                 // one line: what it does
};

// The outcome of checking one candidate run against the reference, with the app's penalty rules.
struct Check {
  double penalty = 0;        // 0 = acceptable output (the papers' "no penalty")
  double max_error = 0;      // app unit (pixels, mm, interval mismatch count)
  double bad_fraction = 0;   // share of output elements that were wrong or unset
  std::string summary;       // one line for logs, e.g. "3 unset, max err 0.2 px"
};

// A size class: a kind of case users meet (docs/FORMATS.md `classes`).
struct SizeClass {
  std::string name;      // short identifier: "paper", "1080p", "head1mm", "large"
  std::string describe;  // one line: what its cases are
};

// Request properties of a case, by the names of docs/FORMATS.md `requires` lines (stereo:
// width, height, disparities, max_disparity, window; ...).
using Properties = std::map<std::string, double>;

// One `requires` line: NAME OP VALUE with OP one of <=, >=, ==, !=.
struct Constraint {
  std::string name, op;
  double value = 0;
  std::string text() const;  // "max_disparity <= 253"
};
// Throws InputError ("<what>: ...") for anything but `NAME OP NUMBER`.
Constraint parse_constraint(const std::string& line, const std::string& what = "requires");
// True when the property is absent (nothing to check) or satisfies the constraint.
bool constraint_holds(const Constraint& c, const Properties& p);
// The first constraint of `lines` that p violates, as text; empty when all hold.
std::string violated_constraint(const std::vector<std::string>& lines, const Properties& p);

#if defined(EVK_HAVE_CUDA)
// One training or hold-out case resident on the current GPU with its reference answer (computed on
// the CPU when the Evaluation is made). Used from a single thread, in the worker process.
class Evaluation {
 public:
  virtual ~Evaluation() = default;
  virtual std::string describe() const = 0;       // e.g. "random pair 320x240 seed 7"
  virtual double work_items() const = 0;          // for rates: disparity evaluations, voxels, reads
  // The case as a request (for checking a variant's constraints): {} when the problem has none.
  virtual Properties properties() const { return {}; }
  // Fills every output element with a poison value (unwritten elements must be detectable).
  virtual void poison(cudaStream_t s) = 0;
  // Enqueues the candidate on the stream; launch geometry comes from cfg. No synchronisation.
  virtual void launch(cudaKernel_t k, const Config& cfg, cudaStream_t s) = 0;
  // Synchronises, copies outputs back, compares every element with the reference.
  virtual Check check(cudaStream_t s) = 0;
};
#else
// Without CUDA there are no cases to run; the type stays complete (unique_ptr<Evaluation> in the
// interface below is destroyed inline).
class Evaluation {
 public:
  virtual ~Evaluation() = default;
};
#endif

class Problem {
 public:
  virtual ~Problem() = default;
  virtual std::string name() const = 0;           // "stereo", "reg_deform", "barracuda_exact"
  virtual std::string kernel_source() const = 0;  // the annotated original (kernels/original/<app>/)
  virtual std::string kernel_entry() const = 0;   // extern "C" __global__ name in that source
  virtual std::vector<ConfigParam> config_params() const = 0;
  // NVRTC options for a configuration: "-DNAME=value" for macros, "-Xptxas=-dlcm=cg" etc.
  // Throws InputError for an illegal combination (rejected before compiling).
  virtual std::vector<std::string> compile_options(const Config& cfg) const = 0;
  // A case of size class `size_class` (one of size_classes()) for generation/hold-out index `seed`
  // (deterministic). Hold-out cases never overlap training ones. Requires a current CUDA device.
  // Throws InputError for an unknown class.
  virtual std::unique_ptr<Evaluation> make_evaluation(std::uint64_t seed, bool holdout,
                                                      const std::string& size_class) const = 0;
  // The first class's case (the problem's original training case).
  std::unique_ptr<Evaluation> make_evaluation(std::uint64_t seed, bool holdout) const {
    return make_evaluation(seed, holdout, size_classes().front().name);
  }

  // The paper's search defaults for this app.
  virtual int default_population() const = 0;
  virtual int default_generations() const = 0;

  // Optional (engine extension, defaults keep older problems compiling): the expression giving the
  // block's thread count, used as the first __launch_bounds__ argument by the grammar's
  // launch-bounds rules (e.g. "BLOCK_W"); empty: 1024, always legal.
  virtual std::string launch_bounds_threads() const { return ""; }
  // Optional: the size classes, first = the paper's case (default: one class, "default").
  virtual std::vector<SizeClass> size_classes() const { return {{"default", "the problem's cases"}}; }
  // Optional: how many consecutive seeds of a class cover its kinds of case (stereo: 3 disparity
  // ranges); `gi minimize` and `gi tune` measure on that many cases per class.
  virtual int probe_cases(const std::string& size_class) const {
    (void)size_class;
    return 1;
  }
  // Optional: the `requires` lines a configuration implies (docs/FORMATS.md), e.g. stereo
  // OUT_TYPE=uchar -> "max_disparity <= 253". Each parses with parse_constraint.
  virtual std::vector<std::string> constraints(const Config& cfg) const {
    (void)cfg;
    return {};
  }
  // Optional: the request property names `requires` lines may use (empty: not checked).
  virtual std::vector<std::string> property_names() const { return {}; }
  // Optional: the size class a request belongs to (what the dispatch looks up), from its properties
  // (property_names()); default: the first class.
  virtual std::string class_of(const Properties& request) const {
    (void)request;
    return size_classes().front().name;
  }

  // Optional: the loop guard's limit (iterations per loop entry per thread) added to every evolvable
  // `for`; must exceed every loop of the original. 0: the engine's default, 65536.
  virtual int loop_limit() const { return 0; }

  Config default_config() const {
    Config c;
    for (const auto& p : config_params()) c[p.name] = p.default_value;
    return c;
  }
  std::vector<std::string> class_names() const;
  // Throws InputError ("--class: ...") unless `name` is one of size_classes().
  void check_class(const std::string& name) const;
};

}  // namespace evk::gi

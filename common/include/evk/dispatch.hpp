// The dispatch registry: which variant of a kernel runs on a given GPU.
//
// Each tool registers its kernels' variants: the human-written `original` and evolved variants keyed
// by compute capability and, optionally, device name. Selection for `--kernel auto` walks the chain
//     exact (cc, device name) -> same cc -> validated on this cc -> original
// (an evolved variant runs on another architecture only where its `# validated-cc:` header names
// that cc: it was checked and timed there; a lower cc alone is not enough)
// and at every step a variant from the user overlay directory (written by `<tool> gi` on the user's
// machine) wins over a built-in one. `--kernel original` forces the original, `--kernel evolved`
// is `auto` that refuses to fall back to the original, and `--kernel FILE` runs a genome file.
//
// A variant may also state what it can run (docs/FORMATS.md): the size classes it was validated in
// (`# classes:`) and constraints on the request (`# requires: disparities <= 255`). `auto` never
// picks a variant whose keys do not fit the request: within each step of the chain it prefers an
// overlay variant, then one validated for the request's size class, then one for every class, and
// when none fits it goes on down the chain, the way CUB's per-architecture tuning policies fall back.
// Pure CPU logic: tested with fake device descriptions.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace evk {

struct DeviceKey {
  int cc = 0;        // 90 for compute capability 9.0
  std::string name;  // "NVIDIA H200"
};

enum class VariantSource { builtin, overlay, file };
const char* to_string(VariantSource s);

struct EmbeddedVariant;  // evk/embedded.hpp

// What a tool is about to run, for applicability: its size class (the tool's gi problem names the
// classes) and numeric properties (stereo: disparities, window, width, height; ...). A constraint on
// a property the request does not give is not checked; an empty size_class matches every variant.
struct Request {
  std::string size_class;
  std::map<std::string, double> props;
};

// One `# requires:` line: NAME OP VALUE, OP in <=, >=, ==, !=.
struct Constraint {
  std::string name, op;
  double value = 0;
  std::string text() const;  // "disparities <= 255"
  bool holds(double x) const;
};

struct Variant {
  std::string kernel;       // logical kernel name, e.g. "stereo"
  std::string id;           // "original" or e.g. "sm90-NVIDIA_H200"
  int cc = 0;               // compute capability it was evolved on; 0 for the original
  std::string device_name;  // empty: any device of that cc
  VariantSource source = VariantSource::builtin;
  std::string path;         // the genome file (overlay / file variants)
  std::string genome;       // genome text; empty for the original
  std::vector<std::string> classes;      // size classes it was validated in; empty: all
  std::vector<int> validated_cc;        // other compute capabilities it was validated on (`# validated-cc:`)
  std::vector<Constraint> constraints;      // all must hold for a request
  std::vector<std::pair<std::string, std::string>> header;  // every "# key: value" line, in order
  const EmbeddedVariant* embedded = nullptr;  // built-in: compiled into the binary (evk/embedded.hpp)
  bool is_original() const { return id == "original"; }
  // Empty when the variant can run `r`, else why not ("requires disparities <= 255, request has 256").
  std::string misfit(const Request& r) const;
  std::string header_value(const std::string& key) const;  // first value of `key`, "" when absent
};

struct Selection {
  Variant variant;
  std::string rule;  // why it was chosen, e.g. "same compute capability (9.0)"
};

// A genome file: '#'-prefixed header lines "key: value" (kernel, cc, device, provenance...) and
// comments, then the genome text. See docs/FORMATS.md. Throws InputError naming the file.
Variant read_genome_file(const std::filesystem::path& path);
// The same from text; `where` names it in errors (a file path, or "built-in variant ID").
Variant parse_genome_text(const std::string& text, const std::string& where);

class Registry {
 public:
  // Registers a kernel with its original variant (idempotent).
  void add_kernel(const std::string& kernel);
  void add(Variant v);
  // Reads every *.genome under dir (recursively); files for kernels not registered are ignored.
  // Returns one message per unreadable file (the caller decides whether to print them).
  std::vector<std::string> load_overlay(const std::filesystem::path& dir);
  // Reads every *.genome under dir as built-in variants (an installed share/evokernels/evolved);
  // a genome whose kernel and id are registered already (embedded in the binary) is skipped, as
  // are kernels not registered. Returns one message per unreadable file. An empty dir: nothing.
  std::vector<std::string> load_builtin_dir(const std::filesystem::path& dir);

  // Adds every variant compiled into this binary (evk::embedded_variants) for the registered kernels.
  void add_builtin();
  // Constraints a tool derives from a variant's genome (e.g. an 8-bit output type limits the
  // disparity range), checked beside the file's own `requires` lines. Must not throw.
  using ConstraintHook = std::function<std::vector<Constraint>(const Variant&)>;
  void set_implied_constraints(const std::string& kernel, ConstraintHook hook);
  // The variant's own constraints plus the implied ones.
  std::vector<Constraint> constraints_of(const Variant& v) const;
  // Empty when v can run r (constraints_of + size class), else why not.
  std::string misfit(const Variant& v, const Request& r) const;

  // choice: "auto", "original", "evolved" or a genome file path. Throws InputError when the choice
  // cannot be met (unknown kernel, no evolved variant that fits, unreadable file, file for another
  // kernel, a file whose constraints the request breaks).
  Selection select(const std::string& kernel, const DeviceKey& device, const std::string& choice = "auto",
                   const Request& request = {}) const;

  std::vector<std::string> kernels() const { return kernels_; }
  const std::vector<Variant>& variants() const { return variants_; }

 private:
  std::vector<std::string> kernels_;
  std::vector<Variant> variants_;
  std::map<std::string, ConstraintHook> hooks_;
};

// Registers the installed evolved variants (evk::installed_evolved_dir(), see install_dirs.hpp).
void add_installed_variants(Registry& reg);

// $EVK_OVERLAY_DIR, else $XDG_DATA_HOME/evokernels/evolved, else ~/.local/share/evokernels/evolved.
std::filesystem::path default_overlay_dir();

std::string format_cc(int cc);  // 90 -> "9.0"

}  // namespace evk

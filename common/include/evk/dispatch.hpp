// The dispatch registry: which variant of a kernel runs on a given GPU.
//
// Each tool registers its kernels' variants: the human-written `original` and evolved variants keyed
// by compute capability and, optionally, device name. Selection for `--kernel auto` walks the chain
//     exact (cc, device name) -> same cc -> nearest lower cc -> original
// and at every step a variant from the user overlay directory (written by `<tool> gi` on the user's
// machine) wins over a built-in one. `--kernel original` forces the original, `--kernel evolved`
// is `auto` that refuses to fall back to the original, and `--kernel FILE` runs a genome file.
// Pure CPU logic: tested with fake device descriptions.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace evk {

struct DeviceKey {
  int cc = 0;        // 90 for compute capability 9.0
  std::string name;  // "NVIDIA H200"
};

enum class VariantSource { builtin, overlay, file };
const char* to_string(VariantSource s);

struct Variant {
  std::string kernel;       // logical kernel name, e.g. "stereo"
  std::string id;           // "original" or e.g. "sm90-NVIDIA_H200"
  int cc = 0;               // compute capability it was evolved on; 0 for the original
  std::string device_name;  // empty: any device of that cc
  VariantSource source = VariantSource::builtin;
  std::string path;         // the genome file (overlay / file variants)
  std::string genome;       // genome text; empty for the original
  bool is_original() const { return id == "original"; }
};

struct Selection {
  Variant variant;
  std::string rule;  // why it was chosen, e.g. "same compute capability (9.0)"
};

// A genome file: '#'-prefixed header lines "key: value" (kernel, cc, device, provenance...) and
// comments, then the genome text. See docs/FORMATS.md. Throws InputError naming the file.
Variant read_genome_file(const std::filesystem::path& path);

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

  // choice: "auto", "original", "evolved" or a genome file path. Throws InputError when the choice
  // cannot be met (unknown kernel, no evolved variant, unreadable file, file for another kernel).
  Selection select(const std::string& kernel, const DeviceKey& device, const std::string& choice = "auto") const;

  std::vector<std::string> kernels() const { return kernels_; }
  const std::vector<Variant>& variants() const { return variants_; }

 private:
  std::vector<std::string> kernels_;
  std::vector<Variant> variants_;
};

// Registers the installed evolved variants (evk::installed_evolved_dir(), see install_dirs.hpp).
void add_installed_variants(Registry& reg);

// $EVK_OVERLAY_DIR, else $XDG_DATA_HOME/evokernels/evolved, else ~/.local/share/evokernels/evolved.
std::filesystem::path default_overlay_dir();

std::string format_cc(int cc);  // 90 -> "9.0"

}  // namespace evk

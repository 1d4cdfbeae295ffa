#include "evk/dispatch.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "evk/error.hpp"

namespace fs = std::filesystem;

namespace evk {

const char* to_string(VariantSource s) {
  switch (s) {
    case VariantSource::builtin: return "built-in";
    case VariantSource::overlay: return "overlay";
    case VariantSource::file: return "file";
  }
  return "?";
}

std::string format_cc(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

static std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// "9.0" or "90" or "sm_90" -> 90
static int parse_cc(const std::string& v, const std::string& where) {
  std::string s = v;
  if (s.rfind("sm_", 0) == 0) s = s.substr(3);
  auto dot = s.find('.');
  try {
    size_t used = 0;
    if (dot != std::string::npos) {
      int ma = std::stoi(s.substr(0, dot), &used);
      int mi = std::stoi(s.substr(dot + 1));
      if (ma > 0 && mi >= 0 && mi < 10) return ma * 10 + mi;
    } else {
      int x = std::stoi(s, &used);
      if (used == s.size() && x >= 10) return x;
    }
  } catch (const std::exception&) {
  }
  input_error(where, "bad compute capability '" + v + "' (want e.g. 9.0)");
}

Variant read_genome_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) input_error(path.string(), "cannot open genome file");
  Variant v;
  v.source = VariantSource::file;
  v.path = path.string();
  v.id = path.stem().string();
  std::string line, genome;
  long long genes = -1;  // "# genes: N" (written by gi since 0.1): the genome must have N genes
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] == '#') {
      auto colon = t.find(':');
      if (colon == std::string::npos) continue;
      std::string key = trim(t.substr(1, colon - 1)), val = trim(t.substr(colon + 1));
      if (key == "kernel") v.kernel = val;
      else if (key == "cc") v.cc = parse_cc(val, path.string());
      else if (key == "device") v.device_name = val;
      else if (key == "id") v.id = val;
      else if (key == "genes") {
        try {
          std::size_t used = 0;
          genes = std::stoll(val, &used);
          if (used != val.size() || genes < 0) throw std::invalid_argument(val);
        } catch (const std::exception&) {
          input_error(path.string(), "bad '# genes:' header '" + val + "'");
        }
      }
      continue;
    }
    if (!genome.empty()) genome += '\n';
    genome += t;
  }
  if (in.bad()) input_error(path.string(), "read error");
  if (v.kernel.empty()) input_error(path.string(), "genome file has no '# kernel: NAME' header line");
  if (v.id == "original") v.id = "original-genome";
  if (genes >= 0) {
    std::istringstream g(genome);
    long long n = 0;
    for (std::string t; g >> t;) ++n;
    if (n != genes)
      input_error(path.string(), "truncated or edited: " + std::to_string(n) + " genes, the '# genes:' header says " +
                                     std::to_string(genes));
  }
  v.genome = genome;
  return v;
}

void Registry::add_kernel(const std::string& kernel) {
  if (std::find(kernels_.begin(), kernels_.end(), kernel) != kernels_.end()) return;
  kernels_.push_back(kernel);
  Variant o;
  o.kernel = kernel;
  o.id = "original";
  variants_.push_back(o);
}

void Registry::add(Variant v) {
  add_kernel(v.kernel);
  variants_.push_back(std::move(v));
}

std::vector<std::string> Registry::load_overlay(const fs::path& dir) {
  std::vector<std::string> problems;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return problems;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".genome") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());  // deterministic order
  for (const auto& f : files) {
    try {
      Variant v = read_genome_file(f);
      if (std::find(kernels_.begin(), kernels_.end(), v.kernel) == kernels_.end()) continue;
      if (v.cc == 0) {
        problems.push_back(f.string() + ": overlay genome has no '# cc:' header; ignored");
        continue;
      }
      v.source = VariantSource::overlay;
      variants_.push_back(std::move(v));
    } catch (const InputError& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

Selection Registry::select(const std::string& kernel, const DeviceKey& dev, const std::string& choice) const {
  if (std::find(kernels_.begin(), kernels_.end(), kernel) == kernels_.end())
    input_error("--kernel", "unknown kernel '" + kernel + "'");
  auto original = [&] {
    for (const auto& v : variants_)
      if (v.kernel == kernel && v.is_original()) return v;
    return Variant{};
  }();

  if (choice == "original") return {original, "--kernel original"};
  if (choice != "auto" && choice != "evolved") {  // a genome file
    Variant v = read_genome_file(choice);
    if (v.kernel != kernel)
      input_error(choice, "genome is for kernel '" + v.kernel + "', not '" + kernel + "'");
    return {v, "--kernel " + choice};
  }

  // Evolved candidates for this kernel that may run on the device (not for a newer architecture).
  std::vector<const Variant*> cands;
  for (const auto& v : variants_)
    if (v.kernel == kernel && !v.is_original() && v.cc > 0 && v.cc <= dev.cc) cands.push_back(&v);
  // Overlay beats built-in at every step; stable order otherwise (first registered wins).
  auto best = [&](auto pred) -> const Variant* {
    const Variant* b = nullptr;
    for (const Variant* v : cands) {
      if (!pred(*v)) continue;
      if (!b || (v->source == VariantSource::overlay && b->source != VariantSource::overlay)) b = v;
    }
    return b;
  };
  if (dev.cc > 0) {
    if (auto* v = best([&](const Variant& x) { return x.cc == dev.cc && !x.device_name.empty() && x.device_name == dev.name; }))
      return {*v, std::string("exact device match (") + dev.name + ", " + format_cc(dev.cc) + ")"};
    if (auto* v = best([&](const Variant& x) { return x.cc == dev.cc && x.device_name.empty(); }))
      return {*v, "same compute capability (" + format_cc(dev.cc) + ")"};
    if (auto* v = best([&](const Variant& x) { return x.cc == dev.cc; }))
      return {*v, "same compute capability (" + format_cc(dev.cc) + ", evolved on " + v->device_name + ")"};
    int lower = 0;
    for (const Variant* v : cands)
      if (v->cc < dev.cc) lower = std::max(lower, v->cc);
    if (lower > 0)
      if (auto* v = best([&](const Variant& x) { return x.cc == lower; }))
        return {*v, "nearest lower compute capability (" + format_cc(lower) + " for a " + format_cc(dev.cc) + " device)"};
  }
  if (choice == "evolved")
    input_error("--kernel evolved", "no evolved variant of '" + kernel + "' for " +
                                        (dev.cc ? dev.name + " (compute capability " + format_cc(dev.cc) + ")" : "this device"));
  return {original, dev.cc ? "no evolved variant for compute capability " + format_cc(dev.cc) + " or lower" : "no GPU"};
}

fs::path default_overlay_dir() {
  if (const char* d = std::getenv("EVK_OVERLAY_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return fs::path(x) / "evokernels" / "evolved";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".local" / "share" / "evokernels" / "evolved";
  return {};
}

}  // namespace evk

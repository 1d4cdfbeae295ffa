#include "evk/dispatch.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "evk/embedded.hpp"
#include "evk/error.hpp"
#include "evk/install_dirs.hpp"
#include "evk/strings.hpp"

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
      if (ma > 0 && ma < 1000 && mi >= 0 && mi < 10) return ma * 10 + mi;  // (no overflow on a huge major)
    } else {
      int x = std::stoi(s, &used);
      if (used == s.size() && x >= 10) return x;
    }
  } catch (const std::exception&) {
  }
  input_error(where, "bad compute capability '" + v + "' (want e.g. 9.0)");
}

std::string Constraint::text() const {
  std::ostringstream o;
  o << name << " " << op << " " << value;
  return o.str();
}

bool Constraint::holds(double x) const {
  if (op == "<=") return x <= value;
  if (op == ">=") return x >= value;
  if (op == "==") return x == value;
  return x != value;  // "!=" (parse_constraint accepts nothing else)
}

static Constraint parse_constraint(const std::string& v, const std::string& where) {
  static const char* ops[] = {"<=", ">=", "==", "!="};
  for (const char* op : ops) {
    auto at = v.find(op);
    if (at == std::string::npos) continue;
    Constraint c;
    c.name = trim(v.substr(0, at));
    c.op = op;
    const std::string num = trim(v.substr(at + 2));
    bool ok = !c.name.empty() && c.name.find_first_of(" \t") == std::string::npos && !num.empty();
    if (ok) {
      try {
        std::size_t used = 0;
        c.value = std::stod(num, &used);
        ok = used == num.size();
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (ok) return c;
    break;
  }
  input_error(where, "bad 'requires' line '" + v + "' (want NAME OP NUMBER, OP one of <= >= == !=)");
}

static std::vector<std::string> parse_classes(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) out.push_back(item);
  }
  if (out.size() == 1 && out[0] == "all") out.clear();
  return out;
}

static std::string misfit_of(const Variant& v, const std::vector<Constraint>& cs, const Request& r) {
  for (const auto& c : cs) {
    auto it = r.props.find(c.name);
    if (it == r.props.end() || c.holds(it->second)) continue;
    std::ostringstream o;
    o << "requires " << c.text() << ", the request has " << it->second;
    return o.str();
  }
  if (!r.size_class.empty() && !v.classes.empty() &&
      std::find(v.classes.begin(), v.classes.end(), r.size_class) == v.classes.end()) {
    std::string list;
    for (const auto& c : v.classes) list += (list.empty() ? "" : ", ") + c;
    return "validated for size class " + list + ", not " + r.size_class;
  }
  return "";
}

std::string Variant::misfit(const Request& r) const { return misfit_of(*this, constraints, r); }

std::string Variant::header_value(const std::string& key) const {
  for (const auto& [k, v] : header)
    if (k == key) return v;
  return "";
}

Variant parse_genome_text(const std::string& text, const std::string& where) {
  Variant v;
  v.source = VariantSource::file;
  std::istringstream in(text);
  std::string line, genome;
  long long genes = -1;  // "# genes: N" (written by gi since 0.1): the genome must have N genes
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (t.empty()) continue;
    if (t[0] == '#') {
      auto colon = t.find(':');
      if (colon == std::string::npos) continue;
      std::string key = trim(t.substr(1, colon - 1)), val = trim(t.substr(colon + 1));
      v.header.emplace_back(key, val);
      if (key == "kernel") v.kernel = val;
      else if (key == "cc") v.cc = parse_cc(val, where);
      else if (key == "device") v.device_name = val;
      else if (key == "id") v.id = val;
      else if (key == "classes") v.classes = parse_classes(val);
      else if (key == "validated-cc")
        for (const std::string& c : parse_classes(val)) v.validated_cc.push_back(parse_cc(c, where));
      else if (key == "requires") v.constraints.push_back(parse_constraint(val, where));
      else if (key == "genes") {
        try {
          std::size_t used = 0;
          genes = std::stoll(val, &used);
          if (used != val.size() || genes < 0) throw std::invalid_argument(val);
        } catch (const std::exception&) {
          input_error(where, "bad '# genes:' header '" + val + "'");
        }
      }
      continue;
    }
    if (!genome.empty()) genome += '\n';
    genome += t;
  }
  if (v.kernel.empty()) input_error(where, "genome file has no '# kernel: NAME' header line");
  if (genes >= 0) {
    std::istringstream g(genome);
    long long n = 0;
    for (std::string t; g >> t;) ++n;
    if (n != genes)
      input_error(where, "truncated or edited: " + std::to_string(n) + " genes, the '# genes:' header says " +
                             std::to_string(genes));
  }
  v.genome = genome;
  return v;
}

Variant read_genome_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) input_error(path.string(), "cannot open genome file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) input_error(path.string(), "read error");
  std::string id = path.stem().string();
  Variant v = parse_genome_text(text.str(), path.string());
  v.path = path.string();
  if (v.id.empty()) v.id = id;
  if (v.id == "original") v.id = "original-genome";
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

void Registry::add_builtin() {
  for (const EmbeddedVariant* e : embedded_variants()) {
    if (std::find(kernels_.begin(), kernels_.end(), e->kernel) == kernels_.end()) continue;
    if (std::any_of(variants_.begin(), variants_.end(), [&](const Variant& x) { return x.kernel == e->kernel && x.embedded == e; }))
      continue;  // added already
    // The build applied and compiled this file: a failure here is a build defect, not bad input.
    Variant v = parse_genome_text(e->genome_file, std::string("built-in variant ") + e->id);
    v.source = VariantSource::builtin;
    if (v.id.empty()) v.id = e->id;
    v.embedded = e;
    variants_.push_back(std::move(v));
  }
}

void Registry::set_implied_constraints(const std::string& kernel, ConstraintHook hook) { hooks_[kernel] = std::move(hook); }

std::vector<Constraint> Registry::constraints_of(const Variant& v) const {
  std::vector<Constraint> cs = v.constraints;
  if (auto it = hooks_.find(v.kernel); it != hooks_.end() && !v.is_original())
    for (auto& c : it->second(v))
      if (std::none_of(cs.begin(), cs.end(), [&](const Constraint& x) { return x.text() == c.text(); })) cs.push_back(std::move(c));
  return cs;
}

std::string Registry::misfit(const Variant& v, const Request& r) const { return misfit_of(v, constraints_of(v), r); }

static std::vector<fs::path> genome_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".genome") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());  // deterministic order
  return files;
}

std::vector<std::string> Registry::load_builtin_dir(const fs::path& dir) {
  std::vector<std::string> problems;
  for (const auto& f : genome_files(dir)) {
    try {
      Variant v = read_genome_file(f);
      if (std::find(kernels_.begin(), kernels_.end(), v.kernel) == kernels_.end()) continue;
      if (v.cc == 0) {
        problems.push_back(f.string() + ": installed genome has no '# cc:' header; ignored");
        continue;
      }
      const bool known = std::any_of(variants_.begin(), variants_.end(),
                                     [&](const Variant& x) { return x.kernel == v.kernel && x.id == v.id; });
      if (known) continue;
      v.source = VariantSource::builtin;
      variants_.push_back(std::move(v));
    } catch (const InputError& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

void add_installed_variants(Registry& reg) { reg.load_builtin_dir(installed_evolved_dir()); }

std::vector<std::string> Registry::load_overlay(const fs::path& dir) {
  std::vector<std::string> problems;
  for (const auto& f : genome_files(dir)) {
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

Selection Registry::select(const std::string& kernel, const DeviceKey& dev, const std::string& choice,
                           const Request& req) const {
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
    // Constraints are correctness (e.g. an 8-bit output cannot hold 256 disparities); classes are
    // only where it was validated faster, so a file the user names runs in any class.
    Request no_class = req;
    no_class.size_class.clear();
    if (std::string why = misfit(v, no_class); !why.empty()) input_error(choice, "cannot run this request: " + why);
    return {v, "--kernel " + choice};
  }

  // Evolved candidates for this kernel that may run on the device: evolved on it or on an older
  // architecture (never a newer one).
  std::vector<const Variant*> cands;
  std::vector<std::string> misfits;
  for (const auto& v : variants_) {
    if (v.kernel != kernel || v.is_original() || v.cc <= 0 || v.cc > dev.cc) continue;
    if (std::string why = misfit(v, req); !why.empty()) {
      misfits.push_back(v.id + ": " + why);
      continue;
    }
    cands.push_back(&v);
  }
  // Within one step of the chain: an overlay variant (evolved on this user's machine) first, then one
  // validated for the request's size class, then one for every class; else the first registered.
  auto rank = [&](const Variant& v) {
    int r = 0;
    if (v.source == VariantSource::overlay) r += 2;
    if (!req.size_class.empty() && !v.classes.empty()) r += 1;  // fits the class (misfits are gone)
    return r;
  };
  auto best = [&](auto pred) -> const Variant* {
    const Variant* b = nullptr;
    for (const Variant* v : cands) {
      if (!pred(*v)) continue;
      if (!b || rank(*v) > rank(*b)) b = v;
    }
    return b;
  };
  auto with_class = [&](std::string rule, const Variant& v) {
    if (!req.size_class.empty()) rule += v.classes.empty() ? ", all size classes" : ", size class " + req.size_class;
    return rule;
  };
  if (dev.cc > 0) {
    if (auto* v = best([&](const Variant& x) { return x.cc == dev.cc && !x.device_name.empty() && x.device_name == dev.name; }))
      return {*v, with_class(std::string("exact device match (") + dev.name + ", " + format_cc(dev.cc) + ")", *v)};
    if (auto* v = best([&](const Variant& x) { return x.cc == dev.cc && x.device_name.empty(); }))
      return {*v, with_class("same compute capability (" + format_cc(dev.cc) + ")", *v)};
    if (auto* v = best([&](const Variant& x) { return x.cc == dev.cc; }))
      return {*v, with_class("same compute capability (" + format_cc(dev.cc) + ", evolved on " + v->device_name + ")", *v)};
    // another architecture's variant only where it was validated on this one
    if (auto* v = best([&](const Variant& x) {
          return std::find(x.validated_cc.begin(), x.validated_cc.end(), dev.cc) != x.validated_cc.end();
        }))
      return {*v, with_class("validated on compute capability " + format_cc(dev.cc) + " (evolved on " + format_cc(v->cc) + ")", *v)};
  }
  std::string skipped;
  for (const auto& m : misfits) skipped += "; " + m;
  if (choice == "evolved")
    input_error("--kernel evolved", "no evolved variant of '" + kernel + "' fits " +
                                        (dev.cc ? dev.name + " (compute capability " + format_cc(dev.cc) + ")" : "this device") +
                                        " and this request" + skipped);
  if (!dev.cc) return {original, "no GPU"};
  return {original, (misfits.empty() ? "no variant evolved or validated on compute capability " + format_cc(dev.cc)
                                     : "no evolved variant fits this request") + skipped};
}

fs::path default_overlay_dir() {
  if (const char* d = std::getenv("EVK_OVERLAY_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return fs::path(x) / "evokernels" / "evolved";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".local" / "share" / "evokernels" / "evolved";
  return {};
}

}  // namespace evk

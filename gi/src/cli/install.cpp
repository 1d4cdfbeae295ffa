// `gi install GENOME`: a genome file checked (header, applies, compiles) and copied into the
// overlay directory.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/evolve.hpp"
#include "evk/gi/genome.hpp"
#include "evk/strings.hpp"
#include "shared.hpp"

namespace fs = std::filesystem;

namespace evk::gi::cli {

namespace {
struct InstallOpts {
  std::string genome, overlay, id;
  bool force = false;
};

// The header keys the problem can check: classes, requires, validated (InputError naming the file).
void check_header(const Problem& p, const std::string& path, const std::string& text) {
  const auto names = p.property_names();
  for (const auto& [k, val] : genome_header(text)) {
    if (k == "classes" && val != "all") {
      std::istringstream in(val);
      std::string cl;
      while (std::getline(in, cl, ',')) {
        cl = trim(cl);
        if (cl.empty()) input_error(path, "empty class in 'classes: " + val + "'");
        try {
          p.check_class(cl);
        } catch (const InputError& e) {
          throw InputError(path + ": classes: " + std::string(e.what()).substr(std::string("--class: ").size()));
        }
      }
    } else if (k == "requires") {
      const Constraint cn = parse_constraint(val, path + ": requires");
      if (!names.empty() && std::find(names.begin(), names.end(), cn.name) == names.end())
        input_error(path, "requires: '" + cn.name + "' is not a request property of " + p.name() + " (" + join(names) +
                              ")");
    } else if (k == "validated") {
      const std::string cl = trim(val.substr(0, val.find(' ')));
      try {
        p.check_class(cl);
      } catch (const InputError&) {
        input_error(path, "validated: '" + cl + "' is not a size class of " + p.name());
      }
    }
  }
}

// The genome as the tools run it compiles with NVRTC for its compute capability.
void check_compiles(const Problem& p, const std::string& path, const std::string& text, int cc) {
  Grammar g = make_grammar(p);
  Genome x = parse_genome(g, text, path);
  ApplyOptions ao;
  ao.engine = false;
  const Variant var = apply(g, x, ao);
  CompileRequest req;
  req.source = var.source;
  try {
    req.options = p.compile_options(var.config);
  } catch (const InputError& e) {
    input_error(path, e.what());
  }
  req.options.insert(req.options.end(), var.options.begin(), var.options.end());
  if (nvrtc_version().empty()) input_error(path, "cannot check that it compiles: this build has no NVRTC");
  const auto res = compile_parallel({req}, cc, /*want_cubin=*/true, 1, "", /*use_cache=*/true);
  if (!res[0].ok) input_error(path, "does not compile for sm_" + std::to_string(cc) + ": " + res[0].log.substr(0, 600));
}

void install_command(const Context& ctx, const InstallOpts& o) {
  auto p = ctx.problem();
  const std::string text = read_genome_arg(o.genome);
  const evk::Variant v = evk::read_genome_file(o.genome);  // kernel, cc, device, id (InputError naming the file)
  if (v.kernel != p->name()) input_error(o.genome, "genome is for kernel '" + v.kernel + "', not '" + p->name() + "'");
  if (v.cc == 0) input_error(o.genome, "no '# cc:' header line (the compute capability it was evolved on)");
  check_header(*p, o.genome, text);
  check_compiles(*p, o.genome, text, v.cc);
  const std::string vid = !o.id.empty() ? o.id : v.id;
  if (vid.empty() || vid.find('/') != std::string::npos || vid == "original")
    input_error("--id", "'" + vid + "' is not a usable variant id");
  const fs::path dest = overlay_of(o.overlay) / p->name() / (vid + ".genome");
  if (fs::exists(dest) && !o.force) input_error(dest.string(), "already installed (use --force to replace it)");
  std::error_code ec;
  fs::create_directories(dest.parent_path(), ec);
  if (ec) input_error(dest.parent_path().string(), "cannot create the overlay directory: " + ec.message());
  write_text_atomic(dest.string(), text);
  std::printf("installed %s (%s, sm_%d, compiled with NVRTC %s)\n", dest.c_str(), vid.c_str(), v.cc,
              nvrtc_version().c_str());
}
}  // namespace

void add_install(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("install", "Check a genome file (header, applies, compiles) and copy it into the overlay directory");
  auto o = std::make_shared<InstallOpts>();
  c->add_option("GENOME", o->genome, "Genome file (docs/FORMATS.md)")->required();
  c->add_option("--overlay", o->overlay, "Overlay directory (default: the tools' overlay directory)");
  c->add_option("--id", o->id, "Variant id (default: the header's id, else the file's stem)");
  c->add_flag("--force", o->force, "Replace an installed variant with the same id");
  c->callback([=] { install_command(*ctx, *o); });
}

}  // namespace evk::gi::cli

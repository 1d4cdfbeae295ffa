// `gi remove ID`: an evolved variant removed from the overlay directory.
#include <cstdio>
#include <filesystem>

#include "evk/error.hpp"
#include "shared.hpp"

namespace fs = std::filesystem;

namespace evk::gi::cli {

namespace {
void remove_command(const Context& ctx, const std::string& id, const std::string& overlay) {
  auto p = ctx.problem();
  const fs::path dir = overlay_of(overlay);
  evk::Registry reg;
  reg.add_kernel(p->name());
  reg.load_overlay(dir);
  std::vector<std::string> gone;
  for (const auto& v : reg.variants())
    if (v.kernel == p->name() && v.id == id && v.source == evk::VariantSource::overlay && !v.path.empty()) {
      std::error_code ec;
      if (!fs::remove(v.path, ec) || ec) input_error(v.path, "cannot remove: " + ec.message());
      gone.push_back(v.path);
    }
  if (gone.empty()) {
    const evk::Registry builtin = ctx.make_registry ? ctx.make_registry() : evk::Registry{};
    for (const auto& v : builtin.variants())
      if (v.kernel == p->name() && v.id == id && !v.is_original())
        input_error(id, "is a built-in variant: it cannot be removed (run with --kernel original to bypass it)");
    input_error(id, "no overlay variant of " + p->name() + " with this id in " + dir.string());
  }
  for (const auto& f : gone) std::printf("removed %s\n", f.c_str());
}
}  // namespace

void add_remove(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("remove", "Remove an evolved variant from the overlay directory");
  auto id = std::make_shared<std::string>();
  auto overlay = std::make_shared<std::string>();
  c->add_option("ID", *id, "Variant id (as `gi list` shows it)")->required();
  c->add_option("--overlay", *overlay, "Overlay directory (default: the tools' overlay directory)");
  c->callback([=] { remove_command(*ctx, *id, *overlay); });
}

}  // namespace evk::gi::cli

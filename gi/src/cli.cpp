// The `gi` subcommand shared by the three tools: its subcommands (one file each under cli/) and
// --seed-kernel. Parsing and printing only; the work is in the library.
#include "evk/gi/cli.hpp"

#include <algorithm>

#include "cli/shared.hpp"

namespace evk::gi {

namespace {

// --seed-kernel NAME on `gi` and on every subcommand that makes a problem (before or after the
// subcommand's name); forwarded to the workers by make_evaluators.
void add_seed_option(CLI::App& gi, const cli::Ctx& ctx) {
  const auto& names = ctx->seeds.names;
  std::string set;
  for (const auto& n : names) set += (set.empty() ? "{" : ",") + n;
  set += "}";
  const CLI::Validator member(
      [names](std::string& v) {
        if (std::find(names.begin(), names.end(), v) != names.end()) return std::string();
        return "must be " + cli::choices_text(names) + " (got '" + v + "')";
      },
      set, "seed kernel");
  const std::string help = "Seed kernel the search starts from (default: " + ctx->seeds.default_name + ")";
  std::vector<CLI::App*> where = {&gi};
  for (auto* sub : gi.get_subcommands({}))
    if (sub->get_name() != "report") where.push_back(sub);
  for (auto* w : where) w->add_option("--seed-kernel", ctx->seed, help)->type_name("NAME")->check(member);
}

void add_subcommands(CLI::App& app, const cli::Ctx& ctx, const std::string& description) {
  auto* gi = app.add_subcommand(ctx->command, description.empty()
                                                  ? "Genetic improvement: re-evolve this tool's kernel for your GPU"
                                                  : description);
  gi->require_subcommand(1);
  cli::add_grammar(*gi, ctx);
  cli::add_classes(*gi, ctx);
  cli::add_apply(*gi, ctx);
  cli::add_run(*gi, ctx);
  cli::add_minimize(*gi, ctx);
  cli::add_tune(*gi, ctx);
  cli::add_validate(*gi, ctx);
  cli::add_evolve(*gi, ctx);
  cli::add_install(*gi, ctx);
  cli::add_list(*gi, ctx);
  cli::add_remove(*gi, ctx);
  cli::add_report(*gi, ctx);
  cli::add_worker(*gi, ctx);
  if (ctx->seeds.make) add_seed_option(*gi, ctx);
}

}  // namespace

void add_gi_command(CLI::App& app, MakeProblem make_problem, std::function<evk::Registry()> make_registry,
                    const std::string& command, const std::string& description) {
  auto ctx = std::make_shared<cli::Context>();
  ctx->command = command;
  ctx->make_problem = std::move(make_problem);
  ctx->make_registry = std::move(make_registry);
  add_subcommands(app, ctx, description);
}

void add_gi_command(CLI::App& app, SeedKernels seeds, std::function<evk::Registry()> make_registry,
                    const std::string& command, const std::string& description) {
  auto ctx = std::make_shared<cli::Context>();
  ctx->command = command;
  ctx->seeds = std::move(seeds);
  ctx->make_registry = std::move(make_registry);
  add_subcommands(app, ctx, description);
}

}  // namespace evk::gi

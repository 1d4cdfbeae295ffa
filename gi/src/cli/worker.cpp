// The hidden `gi worker`: the evaluation process the search starts (gi/src/worker.cpp).
#include <unistd.h>

#include <cstdio>

#include "shared.hpp"

namespace evk::gi::cli {

void add_worker(CLI::App& gi, const Ctx& ctx) {
  auto* c = gi.add_subcommand("worker", "internal: the evaluation worker process");
  c->group("");
  auto device = std::make_shared<int>(0);
  c->add_option("--device", *device, "CUDA device index");
  c->callback([=] {
    auto p = ctx->problem();
    int rc = worker_main(*p, *device);
    std::fflush(nullptr);
    ::_exit(rc);
  });
}

}  // namespace evk::gi::cli

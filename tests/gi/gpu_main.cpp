// gi_gpu_tests doubles as a toy GI tool: `gi_gpu_tests gi ...` runs the `gi` command on the toy
// problem (the worker process is this binary exec'ing `gi worker`); anything else runs the tests.
#include <gtest/gtest.h>

#include <string>

#include "evk/cli.hpp"
#include "evk/gi/cli.hpp"
#include "toy_problem.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "gi") {
    auto app = evk::make_app("gi_gpu_tests", "The GI engine on the toy problem (test tool)");
    evk::gi::add_gi_command(*app, [] { return evk::gi::testing::make_toy_problem(); });
    return evk::run_cli(*app, argc, argv);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

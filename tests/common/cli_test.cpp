// CLI conventions, checked on the real executables: exit codes, one-line errors, --json, --version.
#include <nlohmann/json.hpp>

#include "evk/device.hpp"
#include "evk_testing.hpp"

using evk::testing::run_tool;

namespace {
const char* kTools[] = {"stereo", "reg_deform", "barracuda_exact"};
int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}
}  // namespace

TEST(Cli, VersionAndHelpExitZero) {
  for (const char* t : kTools) {
    auto v = run_tool(t, "--version");
    EXPECT_EQ(v.exit_code, 0) << t;
    EXPECT_NE(v.out.find(t), std::string::npos) << v.out;
    auto h = run_tool(t, "--help");
    EXPECT_EQ(h.exit_code, 0) << t;
    EXPECT_NE(h.out.find("devices"), std::string::npos) << h.out;
    EXPECT_EQ(run_tool(t, "devices --help").exit_code, 0) << t;
  }
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
  for (const char* t : kTools) {
    for (const char* args : {"", "--no-such-option", "no-such-command", "devices --bogus"}) {
      auto r = run_tool(t, args);
      EXPECT_EQ(r.exit_code, 2) << t << " " << args << ": " << r.err;
      EXPECT_EQ(lines(r.err), 1) << t << " " << args << ": " << r.err;
      EXPECT_EQ(r.err.rfind(std::string(t) + ": ", 0), 0u) << r.err;
    }
  }
}

TEST(Cli, BadKernelFileIsAnInputError) {
  auto r = run_tool("stereo", "devices --kernel /nonexistent/x.genome");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/x.genome"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1);
}

TEST(Cli, DevicesJson) {
  for (const char* t : kTools) {
    auto r = run_tool(t, "devices --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);  // throws (fails the test) on invalid JSON
    EXPECT_EQ(j["tool"], t);
    EXPECT_TRUE(j["devices"].is_array());
    const auto& env = evk::gpu_environment();
    EXPECT_EQ(j["devices"].size(), env.devices.size());
    EXPECT_EQ(j["backend"], env.usable() ? "gpu" : "cpu");
    for (const auto& d : j["devices"]) EXPECT_EQ(d["kernels"][t]["variant"], "original");
  }
}

TEST(Cli, DevicesSaysCpuWithoutGpu) {
  if (evk::gpu_environment().usable()) GTEST_SKIP() << "this machine has a GPU";
  auto r = run_tool("stereo", "devices");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("CPU backend will be used"), std::string::npos) << r.out;
}

TEST(Cli, DevicesListsGpuAndVariant) {
  EVK_REQUIRE_GPU();
  auto r = run_tool("stereo", "devices");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(evk::gpu_environment().devices[0].name), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel stereo"), std::string::npos) << r.out;
}

// Without a driver the tools say so plainly (not the runtime's "driver version is insufficient");
// with an old one, both versions; otherwise the runtime's error or the empty device list.
TEST(GpuStatus, SaysWhatIsMissing) {
  EXPECT_EQ(evk::gpu_status(0, 13000, "CUDA driver version is insufficient for CUDA runtime version", 0), "no NVIDIA driver found");
  EXPECT_EQ(evk::gpu_status(12040, 13000, "CUDA driver version is insufficient for CUDA runtime version", 0),
            "the NVIDIA driver supports CUDA up to 12.4, this build needs CUDA 13.0 or newer (update the driver)");
  EXPECT_EQ(evk::gpu_status(13000, 13000, "no CUDA-capable device is detected", 0), "no CUDA device (no CUDA-capable device is detected)");
  EXPECT_EQ(evk::gpu_status(13010, 13000, "", 0), "no CUDA device found");
  EXPECT_EQ(evk::gpu_status(13010, 13000, "", 2), "ok");
}

TEST(GpuStatus, ToolsSayNoDriverAndUseTheCpu) {
  const evk::GpuEnvironment& env = evk::gpu_environment();
  if (!env.built_with_cuda || env.driver_version != 0) GTEST_SKIP() << "needs a CUDA build on a machine without an NVIDIA driver";
  EXPECT_EQ(env.status, "no NVIDIA driver found");
  const auto r = run_tool("barracuda_exact", "devices");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE((r.out + r.err).find("No usable GPU: no NVIDIA driver found."), std::string::npos) << r.out << r.err;
  EXPECT_EQ((r.out + r.err).find("insufficient"), std::string::npos) << r.out << r.err;
}

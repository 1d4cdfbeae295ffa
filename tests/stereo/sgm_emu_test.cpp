// The SGM GPU kernels run by the CUDA emulator (tests/stereo/emu) on the CPU: each stage alone
// against its CPU reference on odd sizes with random data, then the whole device pipeline against
// sgm_cpu (sgm_checks.hpp). The same checks run on a real GPU in stereo_gpu_tests (StereoSgmGpu.*).
#include "emu/emu_sgm_device.hpp"
#include "sgm_checks.hpp"

using stereo_test::EmuSgmDevice;

TEST(StereoSgmEmu, CensusMatchesCpu) {
  EmuSgmDevice d(1);
  sgm_checks::census(d);
}
TEST(StereoSgmEmu, WindowCostMatchesCpu) {
  EmuSgmDevice d(2);
  sgm_checks::window_cost(d);
}
TEST(StereoSgmEmu, AggregateEachDirectionMatchesNaive) {
  EmuSgmDevice d(3);
  sgm_checks::aggregate(d);
}
TEST(StereoSgmEmu, WtaMatchesCpu) {
  EmuSgmDevice d(4);
  sgm_checks::wta(d);
}
TEST(StereoSgmEmu, MedianAndLrCheckMatchCpu) {
  EmuSgmDevice d(5);
  sgm_checks::median_lr(d);
}
TEST(StereoSgmEmu, WholePipelineMatchesSgmCpu) {
  EmuSgmDevice d(6);
  sgm_checks::pipeline(d);
}

TEST(StereoSgmEmu, StreamEngineMatchesSgmCpu) {
  std::uint64_t seed = 50;
  sgm_checks::stream_engine([&] { return std::make_unique<EmuSgmDevice>(seed++); });
}
TEST(StereoSsdExpertEmu, MatchesDisparityCpu) {
  EmuSgmDevice d(7);
  sgm_checks::ssd_expert(d);
}

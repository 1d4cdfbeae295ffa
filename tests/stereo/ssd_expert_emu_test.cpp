// The expert SSD kernels run by the CUDA emulator (tests/stereo/emu: barriers, shared memory and
// the kernels' integer SIMD intrinsics emulated) against disparity_cpu, every pixel, both versions.
#include "emu/emu_sgm_device.hpp"
#include "ssd_expert_checks.hpp"

using stereo_test::EmuSgmDevice;
using evk::stereo::SsdExpertVersion;

TEST(StereoSsdExpertEmu, V2MatchesDisparityCpu) {
  EmuSgmDevice d(71);
  ssd_expert_checks::all_cases(d, SsdExpertVersion::v2);
}
TEST(StereoSsdExpertEmu, V2RandomCasesMatchDisparityCpu) {
  EmuSgmDevice d(72);
  ssd_expert_checks::random_cases(d, SsdExpertVersion::v2, 40, 73);
}
TEST(StereoSsdExpertEmu, V1MatchesDisparityCpu) {
  EmuSgmDevice d(74);
  ssd_expert_checks::all_cases(d, SsdExpertVersion::v1);
}

// The SGM GPU kernels run by the CUDA emulator (tests/stereo/emu) on the CPU: each stage alone
// against its CPU reference on odd sizes with random data, then the whole device pipeline against
// sgm_cpu (sgm_checks.hpp). The same checks run on a real GPU in stereo_gpu_tests (StereoSgmGpu.*).
#include "core/src/sgm/sgm_math.h"
#include "emu/emu_sgm_device.hpp"
#include "evk/error.hpp"
#include "rectify_checks.hpp"
#include "sgm_checks.hpp"

#include <map>
#include <random>
#include <set>

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

// process() with its row bands on two emulated queues, run as early (side first) and as late (main
// first) as the events allow, host buffers staged or taken as pinned; 13 rows: 1, 2, 5 and 13 bands
// and the device's waves (4 rows per wave: 3 bands).
TEST(StereoSgmEmu, ProcessInBandsMatchesSgmCpu) {
  for (auto order : {stereo_test::EmuOrder::side_first, stereo_test::EmuOrder::main_first})
    for (bool pinned : {false, true}) {
      std::uint64_t seed = 60;
      sgm_checks::process_bands([&] { return std::make_unique<EmuSgmDevice>(seed++, order, pinned, 4); }, 29, 13, 15, 4,
                                {1, 2, 5, 13, 0}, pinned, 3);
    }
}
// The same through the device's one queue in issue order (the default emulator).
TEST(StereoSgmEmu, ProcessInIssueOrderMatchesSgmCpu) {
  std::uint64_t seed = 70;
  sgm_checks::process_bands([&] { return std::make_unique<EmuSgmDevice>(seed++); }, 23, 9, 20, 8, {1, 3, 0}, false, 1);
}

TEST(StereoSgmEmu, StreamEngineMatchesSgmCpu) {
  std::uint64_t seed = 50;
  sgm_checks::stream_engine([&] { return std::make_unique<EmuSgmDevice>(seed++); });
}
// The GPU's 32-bit sub-pixel fit (sums below 2^16) against the CPU's 64-bit one: every s0 < 64 with
// all neighbours up to 64 above it, and random triples over the whole 16-bit range.
TEST(StereoSgmMath, SubpixelOffset32MatchesSubpixelOffset) {
  for (int mode = 0; mode <= 2; ++mode) {
    for (int s0 = 0; s0 < 64; ++s0)
      for (int sp = s0 + 1; sp < s0 + 64; ++sp)
        for (int sn = s0; sn < s0 + 64; ++sn)
          ASSERT_EQ(sgm_math::subpixel_offset32(sp, s0, sn, mode), sgm_math::subpixel_offset(sp, s0, sn, mode))
              << sp << " " << s0 << " " << sn << " mode " << mode;
    std::mt19937 rng(17);
    for (int t = 0; t < 200000; ++t) {
      const int s0 = static_cast<int>(rng() % 65535), sp = s0 + 1 + static_cast<int>(rng() % static_cast<unsigned>(65535 - s0)),
                sn = s0 + static_cast<int>(rng() % static_cast<unsigned>(65536 - s0));
      ASSERT_EQ(sgm_math::subpixel_offset32(sp, s0, sn, mode), sgm_math::subpixel_offset(sp, s0, sn, mode))
          << sp << " " << s0 << " " << sn << " mode " << mode;
    }
  }
}

TEST(StereoSsdExpertEmu, MatchesDisparityCpu) {
  EmuSgmDevice d(7);
  sgm_checks::ssd_expert(d);
}

// The staged layout of aggregate_fast.cu (sgm_agg2.h), every lane width and lane count: what the
// block writes (four phase copies of the row segment) stays inside its copy, each lane's K/4
// aligned 16-byte reads return exactly its K codes, and reads of a quarter warp (8 lanes, the unit
// of a 16-byte shared load) are conflict-free from 4 lanes per cell up (at most 2-way below).
#include "core/src/sgm/sgm_agg2.h"
TEST(StereoSgmAgg2Layout, CopiesHoldEveryLanesCodesConflictFree) {
  for (int K : {8, 16, 32})
    for (int G = 1; G <= 32; ++G) {
      int Gs = 1;
      while (Gs < G) Gs *= 2;
      const int Dp = G * K, lines = sgm_agg2::kThreads / Gs, seg = sgm_agg2::segment(Dp, Gs);
      const int cw = sgm_agg2::copy_words(seg, K);
      ASSERT_EQ(cw % 4, 0);
      ASSERT_EQ(sgm_agg2::staged_bytes(Dp, Gs, K), 2 * 4 * cw * 4);
      std::vector<int> words(static_cast<std::size_t>(4 * cw), -1);
      for (int i = 0; i < seg; ++i)
        for (int p = 0; p < 4; ++p) {
          const int q = i - p + 4, w = sgm_agg2::chunk_pos(q >> 2, K) + (q & 3);
          ASSERT_LT(w, cw) << "K " << K << " G " << G;
          ASSERT_EQ(words[static_cast<std::size_t>(p * cw + w)], -1) << "two elements in one word";
          words[static_cast<std::size_t>(p * cw + w)] = i;
        }
      int worst = 0;
      for (int t0 = 0; t0 < lines; t0 += std::max(1, 32 / Gs))  // each warp
        for (int c = 0; c < K / 4; ++c)
          for (int qw = 0; qw < 4; ++qw) {
            std::map<int, std::set<int>> groups;  // bank group (16 bytes of 128) -> distinct chunks
            for (int th = qw * 8; th < qw * 8 + 8; ++th) {
              const int tl = t0 + th / Gs, lane = th % Gs;
              if (tl >= lines) continue;
              const int cl = std::min(lane, G - 1), e = Dp - K + tl - cl * K, ph = e & 3, c0 = (e - ph + 4) >> 2;
              ASSERT_EQ(ph, tl & 3);
              const int addr = ph * cw + sgm_agg2::chunk_pos(c0 + c, K);
              ASSERT_EQ(addr % 4, 0);
              for (int r = 0; r < 4; ++r)
                ASSERT_EQ(words[static_cast<std::size_t>(addr + r)], e + 4 * c + r) << "K " << K << " G " << G;
              groups[(addr / 4) % 8].insert(addr);
            }
            for (auto& [g, a] : groups) worst = std::max(worst, static_cast<int>(a.size()));
          }
      EXPECT_LE(worst, Gs >= 4 ? 1 : 2) << "K " << K << " G " << G << " Gs " << Gs;
    }
}

// The tuning policy: every table row is what sgm_choose returns for its setting, the fallback
// beyond the table, explicit tuning over the table, stored sad/ssd costs always on the seed.
TEST(StereoSgmPolicy, TableFallbackAndOverrides) {
  using namespace evk::stereo;
  int rows = 0;
  const SgmPolicy* t = sgm_policy_table(&rows);
  ASSERT_GT(rows, 0);
  for (int i = 0; i < rows; ++i) {
    SgmParams p;
    p.max_disparity = t[i].max_count - 1;
    p.paths = t[i].paths;
    const SgmChoice c = sgm_choose(p, SgmTuning{});
    EXPECT_EQ(c.agg, t[i].agg) << "row " << i;
    EXPECT_EQ(c.k, t[i].k) << "row " << i;
    EXPECT_EQ(c.k3, t[i].k3) << "row " << i;
    EXPECT_EQ(c.split3, t[i].split3) << "row " << i;
    EXPECT_EQ(c.wta, t[i].wta) << "row " << i;
    EXPECT_EQ(c.staged, t[i].agg == 1 && t[i].staged) << "row " << i;
  }
  SgmParams big;
  big.max_disparity = 299;  // beyond the table: kernel 2, K 16
  EXPECT_EQ(sgm_choose(big, {}).agg, 2);
  EXPECT_EQ(sgm_choose(big, {}).k, 16);
  big.max_disparity = 599;  // K 32 beyond 512
  EXPECT_EQ(sgm_choose(big, {}).k, 32);
  SgmParams p;
  p.max_disparity = 127;
  SgmTuning seed;
  seed.agg = 1;
  seed.staged = true;
  EXPECT_EQ(sgm_choose(p, seed).agg, 1);
  EXPECT_TRUE(sgm_choose(p, seed).staged);
  seed.k = 32;
  EXPECT_EQ(sgm_choose(p, seed).k, 32);
  seed.staged = false;
  seed.direct = true;
  EXPECT_FALSE(sgm_choose(p, seed).staged);
  SgmTuning two;
  two.agg = 2;
  two.staged = true;  // loads belong to the seed: ignored by kernel 2
  EXPECT_FALSE(sgm_choose(p, two).staged);
  EXPECT_EQ(sgm_aggregate_kernel(sgm_layout(64, 48, p, 16), sgm_choose(p, two), true), "sgm_aggregate2_k16_u8");
  p.cost = CostKind::sad;
  EXPECT_EQ(sgm_choose(p, two).agg, 1);
  // sad costs reach 255: 16-bit volumes
  EXPECT_EQ(sgm_aggregate_kernel(sgm_layout(64, 48, p, 16), sgm_choose(p, two), false), "sgm_aggregate_k16_u16_volume");
  EXPECT_EQ(sgm_choose(p, two).wta, 1);  // sad: kernel 1, its wta
  p.cost = CostKind::census;
  EXPECT_EQ(sgm_choose(p, two).wta, 3);  // the row's wta
  EXPECT_EQ(sgm_choose(p, seed).wta, 1);
  two.wta = 1;
  EXPECT_EQ(sgm_choose(p, two).wta, 1);
  SgmTuning bad;
  bad.agg = 4;
  EXPECT_THROW(sgm_choose(p, bad), evk::InputError);
  SgmTuning three;
  three.agg = 3;
  EXPECT_EQ(sgm_choose(p, three).agg, 3);
  EXPECT_EQ(sgm_choose(p, three).wta, 3);  // the row's wta (kernels 2 and 3 write the same volumes)
  SgmTuning w3;
  w3.wta = 2;
  EXPECT_EQ(sgm_choose(p, w3).wta, 2);
  w3.wta = 3;
  EXPECT_EQ(sgm_choose(p, w3).wta, 3);
  w3.wta = 4;
  EXPECT_THROW(sgm_choose(p, w3), evk::InputError);
  // 128/8: the policy row's K3 16 (8 lanes) with the horizontal directions split; the entry carries
  // K3 and the lanes; SgmTuning::split3 = 0 (bench_stereo_sgm --sgm-split3=0) turns the split off
  EXPECT_EQ(sgm_aggregate_kernel(sgm_layout(64, 48, p, 16), sgm_choose(p, three), true), "sgm_aggregate3s_k16_g8_u8");
  SgmTuning unsplit = three;
  unsplit.split3 = 0;
  EXPECT_EQ(sgm_aggregate_kernel(sgm_layout(64, 48, p, 16), sgm_choose(p, unsplit), true), "sgm_aggregate3_k16_g8_u8");
  unsplit.k3 = 4;  // 32 lanes: no split entry; SgmPipeline clears split3 (sgm_agg3_can_split)
  EXPECT_FALSE(sgm_agg3_can_split(sgm_layout(64, 48, p, 16), 4));
  EXPECT_TRUE(sgm_agg3_can_split(sgm_layout(64, 48, p, 16), 16));
  // no row (300 disparities, kernel 3 forced): the smallest K3 of 4, 8, 16 with <= 32 lanes
  SgmParams p300 = p;
  p300.max_disparity = 299;
  EXPECT_EQ(sgm_choose(p300, three).k3, 0);
  EXPECT_EQ(sgm_aggregate_kernel(sgm_layout(64, 48, p300, 16), sgm_choose(p300, three), true), "sgm_aggregate3_k16_g32_u8");
  EXPECT_EQ(sgm_agg3_k(sgm_layout(64, 48, p, 16), 0), 4);
  EXPECT_EQ(sgm_agg3_lanes(sgm_layout(64, 48, p, 16), 0), 32);
  EXPECT_EQ(sgm_agg3_lanes(sgm_layout(64, 48, p, 16), 8), 16);
  EXPECT_EQ(sgm_agg3_lanes(sgm_layout(64, 48, p, 16), 16), 8);
  SgmParams p31 = p;
  p31.max_disparity = 31;
  EXPECT_EQ(sgm_agg3_lanes(sgm_layout(64, 48, p31, 8), 0), 8);  // 8 lanes needed at most 8: the 8-lane entry
  SgmParams p511 = p;
  p511.max_disparity = 511;
  EXPECT_EQ(sgm_agg3_k(sgm_layout(64, 48, p511, 16), 4), 16);  // 512 entries: widened to 16 per lane
  EXPECT_EQ(sgm_agg3_lanes(sgm_layout(64, 48, p511, 16), 4), 32);
  p511.max_disparity = 599;
  EXPECT_EQ(sgm_choose(p511, three).agg, 2);  // beyond 512: kernel 2
  EXPECT_EQ(sgm_agg3_lanes(sgm_layout(64, 48, p511, 32), 0), 0);
  three.k3 = 8;
  EXPECT_EQ(sgm_choose(p, three).k3, 8);
  three.k3 = 2;
  EXPECT_THROW(sgm_choose(p, three), evk::InputError);
  // four shifted copies of the padded right rows, each row a multiple of 4 words
  const SgmLayout l = sgm_layout(61, 7, p, 16);
  EXPECT_EQ(sgm_agg3_copy_pitch(l) % 4, 0);
  // 32-bit offsets: 1080p fits; 16384 x 40000 (the four copies over 2^31 words) does not
  EXPECT_TRUE(sgm_agg3_offsets_fit(sgm_layout(1920, 1080, p, 16)));
  EXPECT_FALSE(sgm_agg3_offsets_fit(sgm_layout(16384, 40000, p, 16)));
  EXPECT_FALSE(sgm_agg3_offsets_fit(sgm_layout(50000, 50000, p, 16)));
  EXPECT_GE(sgm_agg3_copy_pitch(l), l.right_pitch + 3);
}

// Rectification on the device (rectify_checks.hpp).
TEST(StereoSgmEmu, RectifyKernelEqualsRemapCpu) {
  EmuSgmDevice d(80);
  rectify_checks::kernel(d);
}
TEST(StereoSgmEmu, RectifyingPipelineEqualsSgmCpuOfTheRemappedPair) {
  EmuSgmDevice d(81);
  rectify_checks::pipeline(d);
}
TEST(StereoSgmEmu, RectifyingStreamEngineEqualsSgmCpuOfTheRemappedFrames) {
  std::uint64_t seed = 82;
  rectify_checks::stream_engine([&] { return std::make_unique<EmuSgmDevice>(seed++); });
}

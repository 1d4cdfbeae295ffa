// The facade (core/matcher.hpp) on the CPU backend: the maps of the references it stands for,
// every option checked before any work, the frame matcher of batch/video.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/matcher.hpp"
#include "core/reference.hpp"
#include "core/ssd.hpp"
#include "core/stream.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"

using namespace evk::stereo;

namespace {
MatchOptions cpu_options(const std::string& method) {
  MatchOptions o;
  o.method = method;
  o.backend = "cpu";
  o.params.max_disparity = 20;
  o.params.window = 5;
  return o;
}
std::string error_of(MatchOptions o, int w = 64, int h = 48) {
  try {
    o.finalize();
    Matcher m(o, w, h);
  } catch (const evk::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(StereoMatcher, CpuMapsAreTheReferences) {
  const SyntheticPair sp = make_synthetic_pair(64, 48, 20, 5);
  const Image16 l = to_image16(sp.left), r = to_image16(sp.right);
  MatchOptions ssd = cpu_options("ssd");
  ssd.post.lr_check = 1;
  ssd.post.median = 3;
  ssd.finalize();
  std::vector<std::string> notes;
  Matcher ms(ssd, 64, 48, [&](const std::string& s) { notes.push_back(s); });
  EXPECT_EQ(ms.info().backend, "cpu");
  EXPECT_EQ(ms.info().kernel, "cpu-reference");
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes.front().rfind("backend: ", 0), 0u) << notes.front();
  EXPECT_EQ(ms.run(l, r).left.q, ssd_cpu(sp.left, sp.right, ssd.params, ssd.post).left.q);
  // the plain ssd map is Stam's definition in 1/16 pixel
  MatchOptions plain = cpu_options("ssd");
  plain.finalize();
  EXPECT_EQ(Matcher(plain, 64, 48).run(l, r).left.q, to_q(disparity_cpu(sp.left, sp.right, plain.params)).q);

  MatchOptions sgm = cpu_options("sgm");
  sgm.subpixel = "parabola";
  sgm.post.uniqueness = 5;
  sgm.tuning.bands = 3;  // speed only: no effect on the CPU
  sgm.finalize();
  EXPECT_EQ(sgm.sgm.max_disparity, 20);
  EXPECT_EQ(sgm.sgm.post.subpixel, Subpixel::parabola);
  Matcher mg(sgm, 64, 48);
  EXPECT_EQ(mg.info().kernel, "sgm-cpu-reference");
  EXPECT_EQ(mg.run(l, r).left.q, sgm_cpu(l, r, sgm.sgm).left.q);
}

TEST(StereoMatcher, ChecksEveryOptionFirst) {
  MatchOptions o = cpu_options("ssd");
  o.method = "bm";
  EXPECT_NE(error_of(o).find("--method bm: no such matching method"), std::string::npos) << error_of(o);
  o = cpu_options("ssd");
  o.backend = "tpu";
  EXPECT_NE(error_of(o).find("--backend tpu"), std::string::npos);
  o = cpu_options("sgm");
  o.tuning.bands = -1;
  EXPECT_NE(error_of(o).find("--bands"), std::string::npos);
  o = cpu_options("sgm");
  o.tuning.copy_chunk_kib = -1;
  EXPECT_NE(error_of(o).find("--copy-chunk"), std::string::npos);
  o = cpu_options("ssd");
  o.params.window = 4;
  EXPECT_NE(error_of(o).find("--window"), std::string::npos);
  o = cpu_options("sgm");
  o.kernel = "evolved";
  EXPECT_NE(error_of(o).find("--kernel evolved: kernel variants apply to --method ssd"), std::string::npos);
  o = cpu_options("ssd");
  o.kernel = "evolved";
  EXPECT_NE(error_of(o).find("--kernel evolved: kernel variants need the GPU backend"), std::string::npos);
  o = cpu_options("ssd");
  EXPECT_EQ(error_of(o), "");
}

TEST(StereoMatcher, FrameMatcherOnTheCpuIsTheMatcher) {
  const SyntheticPair sp = make_synthetic_pair(48, 32, 20, 9);
  MatchOptions o = cpu_options("sgm");
  o.finalize();
  MatchInfo info;
  int asked = 0;
  auto fm = frame_matcher(o, 3, [&] { ++asked; return std::pair<int, int>{48, 32}; }, info);
  EXPECT_EQ(asked, 1);  // the first pair's size, for the variant choice
  EXPECT_EQ(info.backend, "cpu");
  EXPECT_EQ(info.kernel, "sgm-cpu-reference");
  ASSERT_EQ(fm->slots(), 1);
  Frame f;
  f.left = to_image16(sp.left);
  f.right = to_image16(sp.right);
  fm->submit(0, f);
  EXPECT_EQ(fm->collect(0).left.q, sgm_cpu(sp.left, sp.right, o.sgm).left.q);
}

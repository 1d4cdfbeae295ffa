// `stereo video` on video files (OpenCV's VideoCapture): two files and one side by side give, frame
// by frame, the maps `stereo video` gives on the same frames decoded here by OpenCV and written as
// PGM; --first and --count pick frames; bad videos exit 2 with one line and write nothing. Skipped in
// builds without OpenCV's videoio (there the command says it reads no video files).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/synthetic.hpp"
#include "evk_testing.hpp"
#include "io/io.hpp"
#include "io/video.hpp"

#if defined(EVK_HAVE_OPENCV_VIDEOIO)
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

using namespace evk::stereo;
using evk::testing::run_tool;
namespace fs = std::filesystem;

#if defined(EVK_HAVE_OPENCV_VIDEOIO)
namespace {
constexpr int kW = 64, kH = 48, kFrames = 4;
const char* kMatch = " --method sgm --max-disparity 15 --backend cpu";

cv::Mat mat(const Image8& im) {
  cv::Mat m(im.height, im.width, CV_8UC1);
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) m.at<std::uint8_t>(y, x) = im.at(x, y);
  return m;
}

// MJPEG in AVI: OpenCV's own writer and reader, no codec library needed. Colour frames (grey
// copied to three channels), as cameras give.
void write_video(const fs::path& p, const std::vector<cv::Mat>& frames) {
  cv::VideoWriter w(p.string(), cv::CAP_OPENCV_MJPEG, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 10,
                    frames.front().size(), true);
  ASSERT_TRUE(w.isOpened()) << p;
  for (const cv::Mat& f : frames) {
    cv::Mat c;
    cv::cvtColor(f, c, cv::COLOR_GRAY2BGR);
    w.write(c);
  }
}

// The video's frames as OpenCV decodes them, grey, each split into halves when side by side.
void decode_to_pgm(const fs::path& video, const fs::path& dir, bool halves) {
  fs::create_directories(dir / "l");
  fs::create_directories(dir / "r");
  cv::VideoCapture cap(video.string());  // the backend the tool picks too
  ASSERT_TRUE(cap.isOpened()) << video;
  cv::Mat m, g;
  for (int i = 0; cap.read(m); ++i) {
    cv::cvtColor(m, g, cv::COLOR_BGR2GRAY);
    char n[32];
    std::snprintf(n, sizeof n, "%06d.pgm", i);
    const int w = halves ? g.cols / 2 : g.cols;
    Image8 l{w, g.rows, {}}, r{w, g.rows, {}};
    for (int y = 0; y < g.rows; ++y)
      for (int x = 0; x < w; ++x) {
        l.pixels.push_back(g.at<std::uint8_t>(y, x));
        if (halves) r.pixels.push_back(g.at<std::uint8_t>(y, x + w));
      }
    write_pgm8(dir / "l" / n, l);
    if (halves) write_pgm8(dir / "r" / n, r);
  }
}

struct Videos {
  evk::testing::TempDir t;
  Videos() {
    std::vector<cv::Mat> left, right, sbs;
    for (int i = 0; i < kFrames; ++i) {
      const SyntheticPair sp = make_synthetic_pair(kW, kH, 12, 100 + static_cast<std::uint64_t>(i));
      left.push_back(mat(sp.left));
      right.push_back(mat(sp.right));
      cv::Mat both;
      cv::hconcat(left.back(), right.back(), both);
      sbs.push_back(both);
    }
    write_video(t / "left.avi", left);
    write_video(t / "right.avi", right);
    write_video(t / "sbs.avi", sbs);
    write_video(t / "short.avi", {left[0], left[1]});
    cv::Mat odd(kH, kW + 1, CV_8UC1, cv::Scalar(90));
    write_video(t / "odd.avi", {odd, odd});
    decode_to_pgm(t / "left.avi", t / "ref2", false);
    decode_to_pgm(t / "right.avi", t / "ref2r", false);
    decode_to_pgm(t / "sbs.avi", t / "refs", true);
    fs::create_directories(t / "o");
    fs::create_directories(t / "ref");
  }
  std::string p(const fs::path& n) const { return "'" + (t / n).string() + "'"; }
};

std::vector<float> pfm(const fs::path& p) { return read_disparity(p, 1).v; }
int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
std::string frame_name(int i) {
  char n[16];
  std::snprintf(n, sizeof n, "%06d", i);
  return n;
}
}  // namespace

TEST(StereoVideoFiles, TwoFilesAndSideBySideEqualTheirDecodedFrames) {
  Videos v;
  // references: the frames decoded above, as numbered PGM frames
  auto a = run_tool("stereo", "video " + v.p("ref2/l/%06d.pgm") + " " + v.p("ref2r/l/%06d.pgm") + " -o " + v.p("ref") + kMatch);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = run_tool("stereo", "video " + v.p("left.avi") + " " + v.p("right.avi") + " -o " + v.p("o") + kMatch);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("4 frames"), std::string::npos) << b.out;
  for (int i = 0; i < kFrames; ++i) {
    const fs::path got = v.t / "o" / ("left_" + frame_name(i) + ".pfm"), want = v.t / "ref" / (frame_name(i) + ".pfm");
    ASSERT_TRUE(fs::exists(got)) << got;
    EXPECT_EQ(pfm(got), pfm(want)) << i;
  }
  // frames differ from one another (the comparison is frame by frame, not one frame four times)
  EXPECT_NE(pfm(v.t / "ref" / (frame_name(0) + ".pfm")), pfm(v.t / "ref" / (frame_name(1) + ".pfm")));
  fs::remove_all(v.t / "ref");
  fs::create_directories(v.t / "ref");
  auto c = run_tool("stereo", "video " + v.p("refs/l/%06d.pgm") + " " + v.p("refs/r/%06d.pgm") + " -o " + v.p("ref") + kMatch);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  auto d = run_tool("stereo", "video " + v.p("sbs.avi") + " -o " + v.p("o") + kMatch + " --first 1 --count 2");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find("2 frames"), std::string::npos) << d.out;
  EXPECT_FALSE(fs::exists(v.t / "o" / ("sbs_" + frame_name(0) + ".pfm")));
  EXPECT_FALSE(fs::exists(v.t / "o" / ("sbs_" + frame_name(3) + ".pfm")));
  for (int i = 1; i <= 2; ++i)
    EXPECT_EQ(pfm(v.t / "o" / ("sbs_" + frame_name(i) + ".pfm")), pfm(v.t / "ref" / (frame_name(i) + ".pfm"))) << i;
}

TEST(StereoVideoFiles, BadVideosExit2WithOneLineAndNoOutput) {
  Videos v;
  std::ofstream(v.t / "text.avi") << "not a video\n";
  std::ofstream(v.t / "frame.png") << "x";
  {  // cut: the first half of a good video (its header still promises every frame)
    const auto n = fs::file_size(v.t / "left.avi");
    std::ifstream in(v.t / "left.avi", std::ios::binary);
    std::string b(n / 2, '\0');
    in.read(b.data(), static_cast<std::streamsize>(b.size()));
    std::ofstream(v.t / "cut.avi", std::ios::binary) << b;
  }
  struct Bad {
    std::string args, needle;
  } cases[] = {
      {"video " + v.p("left.avi") + " " + v.p("short.avi"), "differ in length (4 vs 2 frames)"},
      {"video " + v.p("text.avi"), "text.avi"},
      {"video " + v.p("missing.avi"), "missing.avi"},
      {"video " + v.p("odd.avi"), "even width"},
      {"video " + v.p("left.avi") + " " + v.p("ref2/l"), "must be one too"},
      {"video " + v.p("frame.png"), "RIGHT"},
      {"video " + v.p("cut.avi") + " " + v.p("right.avi"), "cut.avi"},
      {"video " + v.p("sbs.avi") + " --first 9", "--first 9"},
  };
  for (const auto& c : cases) {
    auto r = run_tool("stereo", c.args + " -o " + v.p("o") + kMatch);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_TRUE(fs::is_empty(v.t / "o")) << c.args;
  }
}
#else
TEST(StereoVideoFiles, BuildsWithoutVideoioSayThey) {
  EXPECT_FALSE(have_video());
  evk::testing::TempDir t;
  std::ofstream(t / "a.avi") << "x";
  auto r = run_tool("stereo", "video '" + (t / "a.avi").string() + "' -o '" + t.path().string() + "' --backend cpu");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no video files"), std::string::npos) << r.err;
}
#endif

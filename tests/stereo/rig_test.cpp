// stereo calibrate on OpenCV's stereo_calib sample (13 chessboard views of a rig, data/stereo/calib
// from opencv-doc): the rig file against calib3d called here directly on the same views, the
// rectification it writes checked on the corners themselves, and depth/points through Q by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/rig.hpp"
#include "evk/error.hpp"
#include "evk_testing.hpp"
#include "io/io.hpp"
#include "io/rig.hpp"

#ifdef EVK_HAVE_OPENCV
#include <opencv2/calib3d.hpp>
#include <opencv2/core/persistence.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace fs = std::filesystem;

namespace {

std::vector<std::string> views(const char* side) {
  std::vector<std::string> v;
  for (const char* i : {"01", "02", "03", "04", "05", "06", "07", "08", "09", "11", "12", "13", "14"})
    v.push_back((evk::testing::project_data_dir() / "stereo" / "calib" / (std::string(side) + i + ".jpg")).string());
  return v;
}
bool have_sample() { return fs::exists(views("left").front()) && fs::exists(views("right").back()); }

}  // namespace

TEST(StereoRig, DepthAndPointsThroughQByHand) {
  evk::stereo::Rig rig;  // f 500, cx 320, cy 240, baseline 0.1 (Tx = -0.1): Q as stereoRectify builds it
  rig.Q = {1, 0, 0, -320, 0, 1, 0, -240, 0, 0, 0, 500, 0, 0, 10, 0};
  EXPECT_FLOAT_EQ(evk::stereo::depth_from_disparity(rig, 25.f), 500.f / (10.f * 25.f));  // f B / d = 2
  std::array<float, 3> p{};
  ASSERT_TRUE(evk::stereo::point_from_disparity(rig, 420, 140, 25.f, p));
  EXPECT_FLOAT_EQ(p[0], 100.f / 250.f);  // (x - cx) / (d / B)
  EXPECT_FLOAT_EQ(p[1], -100.f / 250.f);
  EXPECT_FLOAT_EQ(p[2], 2.f);
  EXPECT_FALSE(evk::stereo::point_from_disparity(rig, 0, 0, 0.f, p));
  EXPECT_FALSE(evk::stereo::point_from_disparity(rig, 0, 0, std::numeric_limits<float>::infinity(), p));
  EXPECT_TRUE(std::isinf(evk::stereo::depth_from_disparity(rig, -1.f)));
}

#ifdef EVK_HAVE_OPENCV
TEST(StereoRig, CalibrateEqualsCalib3dOnOpenCvsSample) {
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  evk::testing::TempDir dir;
  std::string args = "calibrate -o " + (dir / "rig.yml").string();
  const auto l = views("left"), r = views("right");
  for (std::size_t i = 0; i < l.size(); ++i) args += " " + l[i] + " " + r[i];
  const auto run = evk::testing::run_tool("stereo", args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // calib3d directly, as OpenCV's stereo_calib sample describes its run: corners (sub-pixel), the
  // rational model with one focal length and no tangential distortion
  std::vector<std::vector<cv::Point2f>> pts[2];
  const cv::Size board(9, 6);
  cv::Size size;
  for (std::size_t i = 0; i < l.size(); ++i) {
    std::vector<cv::Point2f> c[2];
    bool ok = true;
    for (int k = 0; k < 2; ++k) {
      const cv::Mat g = cv::imread(k ? r[i] : l[i], cv::IMREAD_GRAYSCALE);
      size = g.size();
      ok = ok && cv::findChessboardCorners(g, board, c[k], cv::CALIB_CB_ADAPTIVE_THRESH | cv::CALIB_CB_NORMALIZE_IMAGE);
      if (ok) cv::cornerSubPix(g, c[k], {11, 11}, {-1, -1}, {cv::TermCriteria::COUNT + cv::TermCriteria::EPS, 30, 0.01});
    }
    if (ok) pts[0].push_back(c[0]), pts[1].push_back(c[1]);
  }
  std::vector<std::vector<cv::Point3f>> obj(pts[0].size());
  for (auto& o : obj)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 9; ++x) o.emplace_back(static_cast<float>(x), static_cast<float>(y), 0.f);
  cv::Mat M[2] = {cv::initCameraMatrix2D(obj, pts[0], size, 0), cv::initCameraMatrix2D(obj, pts[1], size, 0)}, D[2], R, T, E, F;
  const double rms = cv::stereoCalibrate(obj, pts[0], pts[1], M[0], D[0], M[1], D[1], size, R, T, E, F,
                                         cv::CALIB_FIX_ASPECT_RATIO | cv::CALIB_ZERO_TANGENT_DIST | cv::CALIB_USE_INTRINSIC_GUESS |
                                             cv::CALIB_SAME_FOCAL_LENGTH | cv::CALIB_RATIONAL_MODEL | cv::CALIB_FIX_K3 |
                                             cv::CALIB_FIX_K4 | cv::CALIB_FIX_K5,
                                         {cv::TermCriteria::COUNT + cv::TermCriteria::EPS, 100, 1e-5});
  // the rig file, read by OpenCV itself
  cv::FileStorage fs((dir / "rig.yml").string(), cv::FileStorage::READ);
  ASSERT_TRUE(fs.isOpened());
  double ours = 0;
  cv::Mat M1, D1, M2, D2, R1, R2, P1, P2, Q, Tf;
  fs["rms"] >> ours;
  fs["M1"] >> M1, fs["D1"] >> D1, fs["M2"] >> M2, fs["D2"] >> D2, fs["R1"] >> R1, fs["R2"] >> R2, fs["P1"] >> P1, fs["P2"] >> P2,
      fs["Q"] >> Q, fs["T"] >> Tf;
  EXPECT_EQ(static_cast<int>(pts[0].size()), 13);
  EXPECT_NEAR(ours, rms, 0.05 * rms);  // the bound: within 5% of calib3d's own RMS
  EXPECT_LT(rms, 1.0);
  EXPECT_NEAR(M1.at<double>(0, 0), M[0].at<double>(0, 0), 0.01 * M[0].at<double>(0, 0));
  EXPECT_NEAR(cv::norm(Tf), cv::norm(T), 0.01 * cv::norm(T));
  EXPECT_EQ(Q.rows, 4);
  // rectified with the file's R1/P1, R2/P2, a corner and its match share a row: on average within
  // 0.5 px (the calibration's own epipolar error is about 0.2 px), each within 5 px (the lens model's
  // worst fit, at the image corners)
  double worst = 0, sum = 0;
  std::size_t n = 0;
  for (std::size_t v = 0; v < pts[0].size(); ++v) {
    std::vector<cv::Point2f> a, b;
    cv::undistortPoints(pts[0][v], a, M1, D1, R1, P1);
    cv::undistortPoints(pts[1][v], b, M2, D2, R2, P2);
    for (std::size_t j = 0; j < a.size(); ++j, ++n) {
      worst = std::max(worst, static_cast<double>(std::abs(a[j].y - b[j].y)));
      sum += std::abs(a[j].y - b[j].y);
    }
  }
  EXPECT_LT(sum / static_cast<double>(n), 0.5);
  EXPECT_LT(worst, 5.0);
  // and the rig reader gives the same Q
  const evk::stereo::Rig rig = evk::stereo::read_rig((dir / "rig.yml").string());
  EXPECT_DOUBLE_EQ(rig.Q[11], Q.at<double>(2, 3));
  EXPECT_EQ(rig.width, 640);
}

TEST(StereoRig, RawPairToDepthAndPointsAsOpenCvReprojects) {
  // a raw view of the sample rectified through its rig, then SGM; the depth map and the PLY (read
  // back by meshio, a reader we did not write) against cv::reprojectImageTo3D on the same disparities
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  if (evk::testing::run("/usr/bin/python3 -c 'import meshio'").exit_code != 0) GTEST_SKIP() << "no python3-meshio";
  evk::testing::TempDir dir;
  const auto l = views("left"), r = views("right");
  std::string args = "calibrate -o " + (dir / "rig.yml").string();
  for (std::size_t i = 0; i < l.size(); ++i) args += " " + l[i] + " " + r[i];
  ASSERT_EQ(evk::testing::run_tool("stereo", args).exit_code, 0);
  const auto d = evk::testing::run_tool("stereo", "disparity --rig " + (dir / "rig.yml").string() + " " + l[0] + " " + r[0] +
                                                      " -o " + (dir / "d.pfm").string() + " --method sgm --max-disparity 63" +
                                                      " --lr-check 1 --depth " + (dir / "z.pfm").string() + " --points " +
                                                      (dir / "p.ply").string());
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const auto m = evk::testing::run("/usr/bin/python3 -c \"import meshio, sys; p = meshio.read(sys.argv[1]); "
                                   "p.points.astype('<f4').tofile(sys.argv[2]); print(len(p.points))\" " +
                                   (dir / "p.ply").string() + " " + (dir / "p.f32").string());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const evk::stereo::FloatMap disp = evk::stereo::read_disparity(dir / "d.pfm", 1.0);
  const evk::stereo::FloatMap depth = evk::stereo::read_disparity(dir / "z.pfm", 1.0);
  cv::Mat dm(disp.height, disp.width, CV_32F, const_cast<float*>(disp.v.data())), xyz;
  const evk::stereo::Rig rig = evk::stereo::read_rig((dir / "rig.yml").string());
  cv::reprojectImageTo3D(dm, xyz, cv::Mat(4, 4, CV_64F, const_cast<double*>(rig.Q.data())), false, CV_32F);
  std::vector<float> pts(static_cast<std::size_t>(std::stoul(m.out)) * 3);
  std::ifstream(dir / "p.f32", std::ios::binary).read(reinterpret_cast<char*>(pts.data()), static_cast<std::streamsize>(pts.size() * 4));
  std::size_t k = 0, invalid = 0;
  for (int y = 0; y < disp.height; ++y)
    for (int x = 0; x < disp.width; ++x) {
      const float dv = disp.at(x, y);
      if (!std::isfinite(dv) || dv <= 0) {
        ++invalid;
        EXPECT_TRUE(std::isinf(depth.at(x, y)));
        continue;
      }
      const cv::Vec3f e = xyz.at<cv::Vec3f>(y, x);
      ASSERT_LT(k + 2, pts.size() + 2);
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(pts[k * 3 + static_cast<std::size_t>(c)], e[c], 1e-4f * std::max(1.f, std::abs(e[c])));
      EXPECT_NEAR(depth.at(x, y), e[2], 1e-4f * std::abs(e[2]));
      ++k;
    }
  EXPECT_EQ(k * 3, pts.size());
  EXPECT_GT(invalid, 0u);  // the LR check leaves some out
  EXPECT_GT(k, static_cast<std::size_t>(disp.width * disp.height / 2));
}

TEST(StereoRig, BatchWithARigWritesWhatDisparityWrites) {
  // three raw pairs of the sample through `batch --rig --depth --points` (readers and writers in
  // threads): each output byte for byte what `disparity --rig` writes for that pair
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  evk::testing::TempDir dir;
  const auto l = views("left"), r = views("right");
  std::string args = "calibrate -o " + (dir / "rig.yml").string();
  for (std::size_t i = 0; i < l.size(); ++i) args += " " + l[i] + " " + r[i];
  ASSERT_EQ(evk::testing::run_tool("stereo", args).exit_code, 0);
  const std::string match = " --method sgm --max-disparity 63 --lr-check 1 --rig " + (dir / "rig.yml").string();
  std::ofstream list(dir / "pairs.txt");
  fs::create_directories(dir / "out");
  for (int i = 0; i < 3; ++i) {
    list << l[static_cast<std::size_t>(i)] << " " << r[static_cast<std::size_t>(i)] << " p" << i << "\n";
    const std::string p = (dir / ("p" + std::to_string(i))).string();
    const auto d = evk::testing::run_tool("stereo", "disparity " + l[static_cast<std::size_t>(i)] + " " + r[static_cast<std::size_t>(i)] +
                                                        " -o " + p + ".pfm --depth " + p + "_depth.pfm --points " + p + ".ply" + match);
    ASSERT_EQ(d.exit_code, 0) << d.err;
  }
  list.close();
  const auto b = evk::testing::run_tool("stereo", "batch " + (dir / "pairs.txt").string() + " -o " + (dir / "out").string() +
                                                      " --depth --points --readers 2 --writers 2" + match);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto bytes = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  for (int i = 0; i < 3; ++i)
    for (const char* ext : {".pfm", "_depth.pfm", ".ply"}) {
      const std::string name = "p" + std::to_string(i) + ext;
      const std::string a = bytes(dir / "out" / name), e = bytes(dir / name);
      EXPECT_FALSE(e.empty()) << name;
      EXPECT_TRUE(a == e) << name << " differs between batch and disparity";
    }
}

TEST(StereoRig, BadInputExitsTwoWithOneLine) {
  evk::testing::TempDir dir;
  auto refused = [&](const std::string& args, const std::string& says) {
    const auto r = evk::testing::run_tool("stereo", "calibrate -o " + (dir / "rig.yml").string() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "rig.yml"));
  };
  refused("a.jpg", "pairs");
  refused((dir / "missing.jpg").string() + " " + (dir / "missing2.jpg").string(), "missing.jpg");
  refused("--board 9 a.jpg b.jpg", "COLSxROWS");
  if (have_sample()) {  // three pairs of which only two show the board: too few views
    const auto l = views("left"), r = views("right");
    const std::string blank = (dir / "blank.png").string();
    cv::imwrite(blank, cv::Mat(480, 640, CV_8UC1, cv::Scalar(128)));
    refused(l[0] + " " + r[0] + " " + l[1] + " " + r[1] + " " + blank + " " + blank, "at least 3");
  }
  // disparity: --depth without --rig; frames of another size than the rig's views
  cv::imwrite((dir / "small.png").string(), cv::Mat(100, 120, CV_8UC1, cv::Scalar(90)));
  const std::string small = (dir / "small.png").string();
  auto disparity_refused = [&](const std::string& args, const std::string& says) {
    const auto r = evk::testing::run_tool("stereo", "disparity " + small + " " + small + " -o " + (dir / "d.pfm").string() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "d.pfm"));
  };
  disparity_refused("--depth " + (dir / "z.pfm").string(), "needs --rig");
  evk::stereo::Rig rig;
  rig.width = 640, rig.height = 480, rig.M1 = rig.M2 = rig.R1 = rig.R2 = rig.R = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  rig.D1 = rig.D2 = {0, 0, 0, 0, 0};
  rig.P1 = rig.P2 = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  evk::stereo::write_rig(rig, (dir / "r.yml").string());
  disparity_refused("--rig " + (dir / "r.yml").string(), "calibrated on 640x480 views, the frames are 120x100");
  // rig files that are wrong: a field that is not a matrix, a YAML cut in the middle, text, missing
  std::ofstream(dir / "bad.yml") << "width: 640\nheight: 480\nM1: 3\n";
  {
    std::ifstream in(dir / "r.yml");
    const std::string yml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "cut.yml") << yml.substr(0, yml.size() / 3);
  }
  std::ofstream(dir / "text.yml") << "these are not matrices\n";
  for (const char* f : {"bad.yml", "cut.yml", "text.yml", "missing.yml"})
    disparity_refused("--rig " + (dir / f).string(), f);
  EXPECT_THROW(evk::stereo::read_rig((dir / "bad.yml").string()), evk::InputError);
}
#endif

#ifdef EVK_HAVE_OPENCV
// Our remap (exact integer arithmetic at 1/256 pixel, the GPU stage's) against cv::remap (positions
// rounded to 1/32 pixel) on a raw view of the sample through its rig's maps. The two sample positions
// differ by at most 1/64 + 1/512 pixel in each coordinate, and the bilinear interpolant changes by at
// most (|dx| + |dy|) times the range of the pixels of the cells it crosses (the 4x4 block around the
// position, 0 outside), so per pixel |ours - OpenCV| <= 1 (the two roundings of the value) +
// 2 (1/64 + 1/512) range; on average far below one grey level.
TEST(StereoRig, OurRemapStaysWithinPositionRoundingOfCvRemap) {
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  const auto cal = evk::stereo::calibrate_rig(views("left"), views("right"), {});
  const evk::stereo::Rectifier rect(cal.rig);
  const auto maps = rect.maps();
  for (int cam = 0; cam < 2; ++cam) {
    const cv::Mat g = cv::imread(cam ? views("right")[2] : views("left")[2], cv::IMREAD_GRAYSCALE);
    ASSERT_EQ(g.cols, maps->width);
    evk::stereo::Image16 im{g.cols, g.rows, 255, std::vector<std::uint16_t>(g.total())};
    for (std::size_t i = 0; i < g.total(); ++i) im.pixels[i] = g.data[i];
    const evk::stereo::Image16 raw = im;
    rect.apply_one(cam, im);
    cv::Mat src(raw.height, raw.width, CV_16UC1, const_cast<std::uint16_t*>(raw.pixels.data())), want;
    const cv::Mat mx(raw.height, raw.width, CV_32FC1, const_cast<float*>(maps->x[cam].data()));
    const cv::Mat my(raw.height, raw.width, CV_32FC1, const_cast<float*>(maps->y[cam].data()));
    cv::remap(src, want, mx, my, cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
    double sum = 0;
    std::size_t n = 0, over = 0;
    for (int y = 0; y < raw.height; ++y)
      for (int x = 0; x < raw.width; ++x) {
        const std::size_t i = static_cast<std::size_t>(y) * raw.width + x;
        const float px = maps->x[cam][i], py = maps->y[cam][i];
        const int x0 = static_cast<int>(std::floor(px)), y0 = static_cast<int>(std::floor(py));
        if (x0 < 0 || y0 < 0 || x0 + 1 >= raw.width || y0 + 1 >= raw.height) continue;  // border: samples of 0
        int lo = 65535, hi = 0;
        for (int dy = -1; dy < 3; ++dy)
          for (int dx = -1; dx < 3; ++dx) {
            const int xx = x0 + dx, yy = y0 + dy;
            const bool in = xx >= 0 && yy >= 0 && xx < raw.width && yy < raw.height;
            const int v = in ? raw.pixels[static_cast<std::size_t>(yy) * raw.width + xx] : 0;
            lo = std::min(lo, v), hi = std::max(hi, v);
          }
        const double d = std::abs(double(im.pixels[i]) - double(want.at<std::uint16_t>(y, x)));
        over += d > 1.0 + 2 * (1.0 / 64 + 1.0 / 512) * (hi - lo);
        sum += d;
        ++n;
      }
    ASSERT_GT(n, raw.pixels.size() / 2);
    EXPECT_EQ(over, 0u) << "camera " << cam;
    EXPECT_LT(sum / static_cast<double>(n), 0.3) << "camera " << cam;
  }
}

// The maps the Rectifier hands to remap_cpu and to the GPU stage are OpenCV's own, float for float.
TEST(StereoRig, RectifierMapsAreInitUndistortRectifyMaps) {
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  const evk::stereo::Rig rig = evk::stereo::calibrate_rig(views("left"), views("right"), {}).rig;
  const auto maps = evk::stereo::Rectifier(rig).maps();
  ASSERT_EQ(maps->width, 640);
  ASSERT_EQ(maps->height, 480);
  for (int k = 0; k < 2; ++k) {
    auto m3 = [](const std::array<double, 9>& a) { return cv::Mat(3, 3, CV_64F, const_cast<double*>(a.data())).clone(); };
    const cv::Mat P(3, 4, CV_64F, const_cast<double*>((k ? rig.P2 : rig.P1).data()));
    cv::Mat x, y;
    cv::initUndistortRectifyMap(m3(k ? rig.M2 : rig.M1), cv::Mat(k ? rig.D2 : rig.D1, true), m3(k ? rig.R2 : rig.R1), P,
                                cv::Size(rig.width, rig.height), CV_32FC1, x, y);
    ASSERT_EQ(x.total(), maps->x[k].size());
    EXPECT_EQ(std::memcmp(x.ptr<float>(), maps->x[k].data(), x.total() * 4), 0) << "camera " << k;
    EXPECT_EQ(std::memcmp(y.ptr<float>(), maps->y[k].data(), y.total() * 4), 0) << "camera " << k;
  }
}

namespace {
std::string file_bytes(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
// The sample's rig, calibrated by the tool into dir/rig.yml.
void calibrate_sample(const fs::path& dir) {
  const auto l = views("left"), r = views("right");
  std::string args = "calibrate -o " + (dir / "rig.yml").string();
  for (std::size_t i = 0; i < l.size(); ++i) args += " " + l[i] + " " + r[i];
  ASSERT_EQ(evk::testing::run_tool("stereo", args).exit_code, 0);
}
}  // namespace

// --rectified: the PGMs `disparity --rig` writes are the raw pair through the rig's maps and
// remap_cpu (read back at their depth), `disparity` on them without the rig writes the same map, and
// `batch --rectified` writes the same files; --rectified needs --rig and .pgm.
TEST(StereoRig, RectifiedOutputIsTheRemappedRawPair) {
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  evk::testing::TempDir dir;
  calibrate_sample(dir.path());
  const auto l = views("left"), r = views("right");
  const std::string rig = (dir / "rig.yml").string(), match = " --method sgm --max-disparity 63 --lr-check 1 --backend cpu";
  const auto d = evk::testing::run_tool("stereo", "disparity --rig " + rig + " " + l[1] + " " + r[1] + " -o " + (dir / "d.pfm").string() +
                                                      " --rectified " + (dir / "L.pgm").string() + " " + (dir / "R.pgm").string() + match);
  ASSERT_EQ(d.exit_code, 0) << d.err;
  evk::stereo::Image16 raw[2] = {evk::stereo::read_gray16(l[1]), evk::stereo::read_gray16(r[1])};
  evk::stereo::Rectifier(evk::stereo::read_rig(rig)).apply(raw[0], raw[1]);
  for (int k = 0; k < 2; ++k) {
    const evk::stereo::Image16 got = evk::stereo::read_gray16(dir / (k ? "R.pgm" : "L.pgm"));
    EXPECT_EQ(got.maxval, raw[k].maxval);
    EXPECT_TRUE(got.pixels == raw[k].pixels) << "camera " << k;
  }
  const auto d2 = evk::testing::run_tool("stereo", "disparity " + (dir / "L.pgm").string() + " " + (dir / "R.pgm").string() + " -o " +
                                                       (dir / "d2.pfm").string() + match);
  ASSERT_EQ(d2.exit_code, 0) << d2.err;
  EXPECT_TRUE(file_bytes(dir / "d.pfm") == file_bytes(dir / "d2.pfm"));
  fs::create_directories(dir / "out");
  std::ofstream(dir / "pairs.txt") << l[1] << " " << r[1] << " p\n";
  const auto b = evk::testing::run_tool("stereo", "batch " + (dir / "pairs.txt").string() + " -o " + (dir / "out").string() +
                                                      " --rectified --rig " + rig + match);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_TRUE(file_bytes(dir / "out" / "p_rect_left.pgm") == file_bytes(dir / "L.pgm"));
  EXPECT_TRUE(file_bytes(dir / "out" / "p_rect_right.pgm") == file_bytes(dir / "R.pgm"));
  EXPECT_TRUE(file_bytes(dir / "out" / "p.pfm") == file_bytes(dir / "d.pfm"));
  for (const std::string& bad : {" --rectified " + (dir / "a.pgm").string() + " " + (dir / "b.pgm").string(),
                                 " --rig " + rig + " --rectified " + (dir / "a.png").string() + " " + (dir / "b.pgm").string()}) {
    const auto e = evk::testing::run_tool("stereo", "disparity " + l[1] + " " + r[1] + " -o " + (dir / "e.pfm").string() + bad);
    EXPECT_EQ(e.exit_code, 2) << bad;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
    EXPECT_FALSE(fs::exists(dir / "e.pfm"));
  }
}

// On the GPU backend the raw frames go to the device, which rectifies them: every output of
// `disparity --rig` and `batch --rig` (maps, depth, points, rectified pair) byte for byte the CPU
// backend's.
TEST(StereoRig, GpuBackendWithARigWritesWhatTheCpuBackendWrites) {
  EVK_REQUIRE_GPU();
  if (!have_sample()) GTEST_SKIP() << "no data/stereo/calib (scripts/fetch-data.sh)";
  evk::testing::TempDir dir;
  calibrate_sample(dir.path());
  const auto l = views("left"), r = views("right");
  const std::string rig = (dir / "rig.yml").string(), match = " --method sgm --max-disparity 63 --lr-check 1 --median 3 --rig " + rig;
  std::ofstream list(dir / "pairs.txt");
  for (int i = 0; i < 3; ++i) list << l[static_cast<std::size_t>(i)] << " " << r[static_cast<std::size_t>(i)] << " p" << i << "\n";
  list.close();
  for (const char* be : {"cpu", "gpu"}) {
    const fs::path o = dir / be;
    fs::create_directories(o / "batch");
    const auto d = evk::testing::run_tool("stereo", "disparity " + l[0] + " " + r[0] + " -o " + (o / "d.pfm").string() + " --depth " +
                                                        (o / "z.pfm").string() + " --points " + (o / "p.ply").string() + " --rectified " +
                                                        (o / "L.pgm").string() + " " + (o / "R.pgm").string() + " --backend " + be + match);
    ASSERT_EQ(d.exit_code, 0) << be << ": " << d.err;
    const auto b = evk::testing::run_tool("stereo", "batch " + (dir / "pairs.txt").string() + " -o " + (o / "batch").string() +
                                                        " --depth --points --rectified --streams 2 --backend " + be + match);
    ASSERT_EQ(b.exit_code, 0) << be << ": " << b.err;
  }
  for (const std::string f : {"d.pfm", "z.pfm", "p.ply", "L.pgm", "R.pgm"})
    EXPECT_TRUE(file_bytes(dir / "gpu" / f) == file_bytes(dir / "cpu" / f)) << f;
  for (int i = 0; i < 3; ++i)
    for (const char* ext : {".pfm", "_depth.pfm", ".ply", "_rect_left.pgm", "_rect_right.pgm"}) {
      const std::string f = "p" + std::to_string(i) + ext;
      EXPECT_FALSE(file_bytes(dir / "cpu" / "batch" / f).empty()) << f;
      EXPECT_TRUE(file_bytes(dir / "gpu" / "batch" / f) == file_bytes(dir / "cpu" / "batch" / f)) << f;
    }
}
#endif

// Checks of the rectification stage through an SgmDevice: the kernels sgm_rectify_u8/u16 alone
// against remap_cpu on every pixel (odd sizes, random and saturated images, maps with identity,
// sub-pixel and whole-pixel shifts, rotations, rig-like distortion, points outside, NaN and inf,
// positions at and next to the -1 and W/H edges; outputs poisoned with two different bytes), then the
// SgmPipeline and the stream engine with maps against sgm_cpu on the pair rectified on the host. Run
// by the CUDA emulator (rectify_test.cpp, CPU) and on a real GPU (rectify_gpu_test.cpp).
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/rectify.hpp"
#include "core/sgm.hpp"
#include "core/sgm_gpu.hpp"
#include "core/stream.hpp"
#include "core/synthetic.hpp"
#include "evk/error.hpp"
#include "sgm_checks.hpp"  // sgm_checks::Buf

namespace rectify_checks {
using namespace evk::stereo;

inline std::vector<std::uint16_t> random_pixels(int w, int h, int maxval, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint16_t> v(static_cast<std::size_t>(w) * h);
  for (auto& p : v) p = static_cast<std::uint16_t>(rng() % static_cast<unsigned>(maxval + 1));
  return v;
}

// Both cameras' maps from one function of the rectified pixel (camera, u, v) -> (x, y).
template <class F>
RectifyMaps make_maps(int w, int h, F f) {
  RectifyMaps m;
  m.width = w;
  m.height = h;
  for (int k = 0; k < 2; ++k)
    for (int v = 0; v < h; ++v)
      for (int u = 0; u < w; ++u) {
        const auto [x, y] = f(k, u, v);
        m.x[k].push_back(x);
        m.y[k].push_back(y);
      }
  return m;
}

// The map cases, each named.
inline std::vector<std::pair<std::string, RectifyMaps>> map_cases(int w, int h, std::uint64_t seed) {
  using P = std::pair<float, float>;
  const float W = static_cast<float>(w), H = static_cast<float>(h), nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  std::vector<std::pair<std::string, RectifyMaps>> c;
  c.emplace_back("identity", make_maps(w, h, [](int, int u, int v) { return P(u, v); }));
  c.emplace_back("sub-pixel shift", make_maps(w, h, [](int k, int u, int v) {
                   return k ? P(u - 0.7f, v + 0.3f) : P(u + 0.3f, v - 0.7f);
                 }));
  c.emplace_back("whole-pixel shift", make_maps(w, h, [](int k, int u, int v) { return P(u - 2 + k, v + 3 - k); }));
  c.emplace_back("half pixels", make_maps(w, h, [](int, int u, int v) { return P(u + 0.5f, v - 0.5f); }));
  // 256 x + 0.5 an integer: the rounding to 1/256 exactly at its ties
  c.emplace_back("1/512 ties", make_maps(w, h, [](int k, int u, int v) {
                   return P(u + static_cast<float>(2 * ((u + v + k) % 256) + 1) / 512.f, v - static_cast<float>(2 * (u % 7) + 1) / 512.f);
                 }));
  const float cx = (W - 1) / 2, cy = (H - 1) / 2;
  for (float deg : {3.f, 30.f})
    c.emplace_back("rotation " + std::to_string(static_cast<int>(deg)), make_maps(w, h, [=](int k, int u, int v) {
                     const float a = (k ? -deg : deg) * 3.14159265f / 180, s = deg > 10 ? 1.3f : 1.f;
                     return P(cx + s * (std::cos(a) * (u - cx) - std::sin(a) * (v - cy)),
                              cy + s * (std::sin(a) * (u - cx) + std::cos(a) * (v - cy)));
                   }));
  c.emplace_back("rig barrel", synthetic_rectify_maps(w, h, 0.02, -0.08));
  c.emplace_back("rig pincushion", synthetic_rectify_maps(w, h, -0.05, 0.2));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> rx(-3.f, W + 2.f), ry(-3.f, H + 2.f);
  c.emplace_back("random", make_maps(w, h, [&](int, int, int) { return P(rx(rng), ry(rng)); }));
  // each coordinate cycles through the edges and the values next to them, and values that are no
  // positions at all (the two cycles of coprime lengths meet in every combination)
  const std::vector<float> ex = {-1.f, std::nextafter(-1.f, 0.f), -0.999f, -0.5f, -0.001f, 0.f, -0.f, W - 1, W - 0.5f,
                                 W - 0.001f, std::nextafter(W, 0.f), W, W + 0.25f, nan, inf, -inf, 1e30f, -1e30f, 0.75f};
  const std::vector<float> ey = {-1.f, std::nextafter(-1.f, 0.f), -0.75f, -0.f, 0.25f, H - 1, H - 0.25f, std::nextafter(H, 0.f),
                                 H, nan, -inf, inf, -3e9f, 3e9f, 0.5f, H - 1.5f, std::nextafter(-1.f, -2.f)};
  c.emplace_back("edges and non-finite", make_maps(w, h, [&](int k, int u, int v) {
                   const std::size_t i = static_cast<std::size_t>(v) * w + u + static_cast<std::size_t>(k) * 5;
                   return P(ex[i % ex.size()], ey[i % ey.size()]);
                 }));
  return c;
}

// The kernel of `bits` on one camera's maps: poisoned output, every pixel against remap_cpu.
inline void rectify_once(SgmDevice& dev, int bits, const std::vector<std::uint16_t>& raw, const RectifyMaps& m, int k,
                         const std::string& what) {
  const int w = m.width, h = m.height;
  const std::size_t n = raw.size(), px = bits / 8;
  std::vector<std::uint16_t> ref(n);
  std::vector<std::uint8_t> raw8(raw.begin(), raw.end()), ref8(n);
  if (bits == 16) remap_cpu(raw.data(), w, h, m.x[k].data(), m.y[k].data(), ref.data());
  else remap_cpu(raw8.data(), w, h, m.x[k].data(), m.y[k].data(), ref8.data()), ref.assign(ref8.begin(), ref8.end());
  void* in = dev.alloc(n * px);
  void* mx = dev.alloc(n * 4);
  void* my = dev.alloc(n * 4);
  void* out = dev.alloc(n * px);
  dev.to_device(in, bits == 16 ? static_cast<const void*>(raw.data()) : raw8.data(), n * px);
  dev.to_device(mx, m.x[k].data(), n * 4);
  dev.to_device(my, m.y[k].data(), n * 4);
  for (int poison : {0xA5, 0x5A}) {  // a pixel left unwritten cannot equal the reference under both
    dev.fill(out, poison, n * px);
    int W = w, H = h;
    void* a[] = {&in, &mx, &my, &W, &H, &out};
    dev.launch(bits == 16 ? "sgm_rectify_u16" : "sgm_rectify_u8", sgm_rectify_grid(w, h), kSgmRectifyBlock, 0, a);
    std::vector<std::uint16_t> got(n);
    std::vector<std::uint8_t> got8(n);
    if (bits == 16) dev.to_host(got.data(), out, n * 2);
    else dev.to_host(got8.data(), out, n);
    dev.synchronize();
    if (bits == 8) got.assign(got8.begin(), got8.end());
    for (std::size_t i = 0; i < n; ++i)
      if (got[i] != ref[i]) {
        ADD_FAILURE() << what << ", " << bits << "-bit, camera " << k << ", " << w << "x" << h << ": pixel (" << i % w << ","
                      << i / w << ") from (" << m.x[k][i] << ", " << m.y[k][i] << ") is " << got[i] << ", remap_cpu "
                      << ref[i];
        break;
      }
  }
  for (void* q : {in, mx, my, out}) dev.release(q);
}

// Every map case on random images of each depth (full range) and on saturated ones (the largest sums).
inline void kernel(SgmDevice& dev, const std::vector<std::pair<int, int>>& sizes = {{97, 61}, {1, 1}, {31, 9}, {40, 17}}) {
  std::uint64_t seed = 4000;
  for (auto [w, h] : sizes)
    for (const auto& [name, m] : map_cases(w, h, seed++))
      for (int bits : {8, 16}) {
        const int maxval = bits == 16 ? 65535 : 255, camera = static_cast<int>(++seed % 2);
        rectify_once(dev, bits, random_pixels(w, h, maxval, seed), m, camera, name + ", random");
        if (name == "sub-pixel shift" || name == "rig barrel")
          rectify_once(dev, bits, std::vector<std::uint16_t>(static_cast<std::size_t>(w) * h, static_cast<std::uint16_t>(maxval)), m,
                       1 - camera, name + ", saturated");
      }
}

// One camera's map: rotation by angle_deg about the centre, scale, shift (tx, ty), radial k1.
inline void warp_map(int w, int h, double angle_deg, double scale, double tx, double ty, double k1, std::vector<float>& mx,
                     std::vector<float>& my) {
  const double a = angle_deg * 3.14159265358979 / 180, c = std::cos(a), s = std::sin(a);
  const double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0, r2 = std::max(1.0, cx * cx + cy * cy);
  mx.assign(static_cast<std::size_t>(w) * h, 0.f);
  my.assign(mx.size(), 0.f);
  for (int v = 0; v < h; ++v)
    for (int u = 0; u < w; ++u) {
      const double p = scale * (c * (u - cx) - s * (v - cy)), q = scale * (s * (u - cx) + c * (v - cy));
      const double f = 1 + k1 * (p * p + q * q) / r2;
      mx[static_cast<std::size_t>(v) * w + u] = static_cast<float>(cx + tx + f * p);
      my[static_cast<std::size_t>(v) * w + u] = static_cast<float>(cy + ty + f * q);
    }
}
// A random image of T (maxval) through one map: the kernel against remap_cpu, poisoned outputs.
template <class T>
void kernel_case(SgmDevice& dev, int w, int h, int maxval, const std::vector<float>& mx, const std::vector<float>& my,
                 std::uint64_t seed, const std::string& what) {
  RectifyMaps m;
  m.width = w;
  m.height = h;
  m.x[0] = mx;
  m.y[0] = my;
  rectify_once(dev, static_cast<int>(sizeof(T)) * 8, random_pixels(w, h, maxval, seed), m, 0, what);
}

// Large frames: rig-like maps, both cameras and depths.
inline void kernel_large(SgmDevice& dev, int w, int h) {
  const RectifyMaps m = synthetic_rectify_maps(w, h, 0.01, -0.06);
  for (int bits : {8, 16})
    for (int k = 0; k < 2; ++k)
      rectify_once(dev, bits, random_pixels(w, h, bits == 16 ? 65535 : 255, 77 + static_cast<unsigned>(bits + k)), m, k,
                   "rig " + std::to_string(w) + "x" + std::to_string(h));
}

// A raw pair for SGM of w x h at maxval: a synthetic pair (scaled to maxval), seen through the maps'
// inverse only approximately (the maps are mild), so the rectified pair keeps its structure.
inline std::pair<Image16, Image16> raw_pair(int w, int h, int maxd, int maxval, std::uint64_t seed) {
  SyntheticPair sp = make_synthetic_pair(w, h, maxd, seed);
  Image16 l = to_image16(sp.left), r = to_image16(sp.right);
  for (Image16* im : {&l, &r}) {
    im->maxval = maxval;
    for (auto& p : im->pixels) p = static_cast<std::uint16_t>(p * maxval / 255);
  }
  return {l, r};
}

inline std::pair<Image16, Image16> host_rectified(const RectifyMaps& m, Image16 l, Image16 r) {
  rectify_image(m, 0, l);
  rectify_image(m, 1, r);
  return {l, r};
}

inline std::string first_diff(const DisparityQ& a, const DisparityQ& b) {
  if (a.width != b.width || a.height != b.height) return "sizes differ";
  for (std::size_t i = 0; i < a.q.size(); ++i)
    if (a.q[i] != b.q[i])
      return "pixel (" + std::to_string(i % a.width) + "," + std::to_string(i / a.width) + "): " + std::to_string(a.q[i]) +
             " vs " + std::to_string(b.q[i]);
  return "";
}

inline SgmParams params(CostKind cost, int maxd) {
  SgmParams p;
  p.max_disparity = maxd;
  p.cost = cost;
  p.window = 3;
  p.post.uniqueness = 5;
  p.post.subpixel = Subpixel::parabola;
  p.post.lr_check = 1;
  p.post.median = 3;
  p.post.right = true;
  return p;
}

// SgmPipeline with maps: run() (process) and upload() + compute() + download() on the raw pair, the
// rectified images the cost read, all against the host: remap_cpu, then sgm_cpu.
inline void pipeline(SgmDevice& dev, int w = 45, int h = 27, int maxd = 15) {
  struct Case {
    CostKind cost;
    int maxval, bits;
  };
  std::uint64_t seed = 300;
  for (const Case& c : {Case{CostKind::census, 255, 8}, Case{CostKind::census, 1023, 16}, Case{CostKind::sad, 255, 8}}) {
    const SgmParams p = params(c.cost, maxd);
    const RectifyMaps m = synthetic_rectify_maps(w, h, 0.004, -0.02);
    const auto [l, r] = raw_pair(w, h, maxd, c.maxval, seed++);
    const auto [rl, rr] = host_rectified(m, l, r);
    const StereoResult ref = sgm_cpu(rl, rr, p);
    const std::string what = to_string(c.cost) + " " + std::to_string(c.bits) + "-bit " + std::to_string(w) + "x" + std::to_string(h);
    SgmPipeline pl(dev, p, w, h, c.bits);
    ASSERT_EQ(pl.bits(), c.bits);
    pl.set_rectify(m);
    EXPECT_TRUE(pl.rectifies());
    pl.poison();
    const StereoResult got = pl.run(l, r);
    EXPECT_EQ(first_diff(got.left, ref.left), "") << what << ", run";
    EXPECT_EQ(first_diff(got.right, ref.right), "") << what << ", run, right map";
    // the rectified images on the device, as the cost read them
    const std::size_t n = static_cast<std::size_t>(w) * h;
    for (int i = 0; i < 2; ++i) {
      std::vector<std::uint16_t> img(n);
      std::vector<std::uint8_t> img8(n);
      if (c.bits == 16) pl.download_image(i, img.data());
      else pl.download_image(i, img8.data());
      dev.synchronize();
      if (c.bits == 8) img.assign(img8.begin(), img8.end());
      EXPECT_TRUE(img == (i ? rr : rl).pixels) << what << ", rectified image " << i;
    }
    // the enqueue path on the raw pair; then the host-rectified pair with raw = false
    std::vector<std::int16_t> dl(n), dr(n);
    std::vector<std::uint8_t> b[2];
    for (int i = 0; i < 2; ++i) {
      const Image16& im = i ? r : l;
      b[i] = c.bits == 16 ? std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(im.pixels.data()),
                                                      reinterpret_cast<const std::uint8_t*>(im.pixels.data()) + n * 2)
                          : to_image8(im).pixels;
    }
    pl.poison();
    pl.upload(b[0].data(), b[1].data());
    pl.compute();
    pl.download(dl.data(), dr.data());
    dev.synchronize();
    DisparityQ gl{w, h, dl};
    pl.finish_host(gl);
    EXPECT_EQ(first_diff(gl, ref.left), "") << what << ", upload + compute";
    EXPECT_EQ(first_diff(DisparityQ{w, h, dr}, ref.right), "") << what << ", upload + compute, right map";
  }
}

// The stream engine with maps: frames of maxval 255 (8 bits) and 1023 (16-bit census) rectified on
// the device, frames of maxval 200 (a conversion that rounds) on the host in prepare(); every map
// against sgm_cpu on the pair rectified on the host.
inline void stream_engine(const std::function<std::unique_ptr<SgmDevice>()>& make, int w = 41, int h = 23, int maxd = 15) {
  const SgmParams p = params(CostKind::census, maxd);
  auto maps = std::make_shared<RectifyMaps>(synthetic_rectify_maps(w, h, -0.003, 0.03));
  auto m = sgm_device_matcher(p, make, 2, {}, maps);
  const int n = 6, maxval[3] = {255, 1023, 200};
  std::vector<std::pair<Image16, Image16>> raw;
  for (int i = 0; i < n; ++i) raw.push_back(raw_pair(w, h, maxd, maxval[i % 3], 500 + static_cast<unsigned>(i)));
  for (int i = 0; i < 3; ++i) {
    Frame f;
    f.left = raw[static_cast<std::size_t>(i)].first;
    f.right = raw[static_cast<std::size_t>(i)].second;
    m->prepare(f);
    EXPECT_EQ(f.raw, i != 2) << "maxval " << maxval[i];
    EXPECT_EQ(f.bits, i == 1 ? 16 : 8) << "maxval " << maxval[i];
  }
  std::mutex mu;
  std::vector<StereoResult> got(n);
  StreamOptions o;
  o.readers = 2;
  o.writers = 2;
  const StreamStats st = run_stream(
      n,
      [&](int i) {
        Frame f;
        f.left = raw[static_cast<std::size_t>(i)].first;
        f.right = raw[static_cast<std::size_t>(i)].second;
        return f;
      },
      *m,
      [&](int i, StereoResult& r) {
        std::lock_guard<std::mutex> g(mu);
        got[static_cast<std::size_t>(i)] = r;
      },
      o);
  EXPECT_EQ(st.frames, n);
  for (int i = 0; i < n; ++i) {
    const auto [rl, rr] = host_rectified(*maps, raw[static_cast<std::size_t>(i)].first, raw[static_cast<std::size_t>(i)].second);
    const StereoResult ref = sgm_cpu(rl, rr, p);
    EXPECT_EQ(first_diff(got[static_cast<std::size_t>(i)].left, ref.left), "") << "frame " << i;
    EXPECT_EQ(first_diff(got[static_cast<std::size_t>(i)].right, ref.right), "") << "frame " << i;
  }
  // a frame of another size than the rig's views: InputError naming --rig
  Frame bad;
  bad.left = bad.right = raw_pair(w + 1, h, maxd, 255, 9).first;
  m->prepare(bad);
  try {
    m->submit(0, bad);
    ADD_FAILURE() << "a frame of another size was taken";
  } catch (const evk::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--rig"), std::string::npos) << e.what();
  }
}

}  // namespace rectify_checks

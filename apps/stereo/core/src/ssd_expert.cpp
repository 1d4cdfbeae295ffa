// Host side of the expert SSD kernels: buffers, launch geometry, shared-memory size.
#include "core/ssd_expert.hpp"

#include "evk/error.hpp"

namespace evk::stereo {

namespace {
// EX1_* of ssd_expert_v1.cu
constexpr int kV1Tx = 64, kV1Ty = 32, kV1Dc = 4, kV1Threads = 256;
// EX_TX of ssd_expert.cu
constexpr int kTx = 64;
}  // namespace

void SsdExpertConfig::check() const {
  if (ty < 8 || ty > 128 || ty % 8 != 0) input_error("EX_TY", "must be a multiple of 8 in 8..128");
  if (dc < 1 || dc > 16) input_error("EX_DC", "must be 1..16");
  if (ds < 1 || ds > 1024) input_error("EX_DS", "must be 1..1024");
}

std::vector<std::string> SsdExpertConfig::compile_options(int radius) const {
  return {"-DEX_R=" + std::to_string(radius), "-DEX_TY=" + std::to_string(ty), "-DEX_DC=" + std::to_string(dc),
          "-DEX_DS=" + std::to_string(ds)};
}

// The EX_VOFF / EX_VP arithmetic of ssd_expert.cu, in 4-byte words.
std::size_t ssd_expert_smem(int r, const SsdExpertConfig& c) {
  const int hw = kTx + 2 * r, rows4 = (c.ty + 2 * r + 3) / 4;
  const int vp4 = (hw + 3) / 4 * 4, vp = vp4 % 8 == 0 ? vp4 + 4 : vp4;
  const long long voff = (static_cast<long long>(rows4) * (2 * hw + c.ds - 1) + 3) / 4 * 4;
  return static_cast<std::size_t>(4 * (voff + static_cast<long long>(c.dc) * c.ty * vp));
}

std::size_t ssd_expert_v1_smem(int r) {
  const int hw = kV1Tx + 2 * r, rows = kV1Ty + 2 * r;
  const int lp = (hw + 15) / 16 * 16, rp = (hw + kV1Dc - 1 + 15) / 16 * 16, vp = (hw + 3) / 4 * 4 + 4;
  return static_cast<std::size_t>(rows) * (lp + rp) + static_cast<std::size_t>(kV1Dc) * kV1Ty * vp * 4;
}

SsdExpertLaunch ssd_expert_launch(int w, int h, int r, const SsdExpertConfig& c) {
  c.check();
  if (r < 1 || r > kSsdExpertV2MaxRadius) input_error("--window", "the expert SSD kernel v2 takes radii 1..8");
  SsdExpertLaunch l;
  l.grid_x = static_cast<unsigned>((w + kTx - 1) / kTx);
  l.grid_y = static_cast<unsigned>((h + c.ty - 1) / c.ty);
  l.threads = static_cast<unsigned>(c.threads());
  l.smem = ssd_expert_smem(r, c);
  return l;
}

SsdExpert::SsdExpert(SgmDevice& dev, int w, int h, SsdExpertVersion version)
    : dev_(dev), w_(w), h_(h), version_(version) {
  if (w <= 0 || h <= 0) input_error("images", "empty image");
  const std::size_t n = static_cast<std::size_t>(w) * h;
  img_[0] = dev_.alloc(n);
  img_[1] = dev_.alloc(n);
  out_ = dev_.alloc(n * 4);
}

SsdExpert::~SsdExpert() {
  for (void* p : {img_[0], img_[1], out_})
    if (p) dev_.release(p);
}

void SsdExpert::upload(const std::uint8_t* l, const std::uint8_t* r) {
  const std::size_t n = static_cast<std::size_t>(w_) * h_;
  dev_.to_device(img_[0], l, n);
  dev_.to_device(img_[1], r, n);
}

std::string SsdExpert::kernel_name(int r) const {
  if (version_ == SsdExpertVersion::v2 && r >= 1 && r <= kSsdExpertV2MaxRadius) return "ssd_expert_r" + std::to_string(r);
  return r >= 1 && r <= 8 ? "ssd_expert_v1_r" + std::to_string(r) : std::string("ssd_expert_v1");
}

void SsdExpert::compute(const Params& p) {
  validate(p);
  int r = p.radius();
  if (r > kSsdExpertMaxRadius)
    input_error("--window", "the expert SSD kernel takes windows up to " + std::to_string(2 * kSsdExpertMaxRadius + 1));
  int W = w_, H = h_, dmin = p.min_disparity, dmax = p.max_disparity, min_ssd = p.min_ssd;
  const std::string name = kernel_name(r);
  if (name.rfind("ssd_expert_r", 0) == 0) {  // v2: no radius argument
    const SsdExpertLaunch l = ssd_expert_launch(W, H, r);
    void* a[] = {&img_[0], &img_[1], &out_, &W, &H, &dmin, &dmax, &min_ssd};
    dev_.launch(name, Dim3{l.grid_x, l.grid_y, 1}, Dim3{l.threads, 1, 1}, l.smem, a);
    return;
  }
  void* a[] = {&img_[0], &img_[1], &out_, &W, &H, &dmin, &dmax, &r, &min_ssd};
  dev_.launch(name, Dim3{static_cast<unsigned>((W + kV1Tx - 1) / kV1Tx), static_cast<unsigned>((H + kV1Ty - 1) / kV1Ty), 1},
              Dim3{kV1Threads, 1, 1}, ssd_expert_v1_smem(r), a);
}

void SsdExpert::download(int* out) { dev_.to_host(out, out_, static_cast<std::size_t>(w_) * h_ * 4); }

void SsdExpert::poison() { dev_.fill(out_, 0xA5, static_cast<std::size_t>(w_) * h_ * 4); }

DisparityMap SsdExpert::run(const Image8& l, const Image8& r, const Params& p) {
  validate_pair(l, r);
  if (l.width != w_ || l.height != h_) input_error("images", "pair size differs from the kernel's buffers");
  DisparityMap m{w_, h_, std::vector<int>(static_cast<std::size_t>(w_) * h_)};
  upload(l.pixels.data(), r.pixels.data());
  compute(p);
  download(m.d.data());
  dev_.synchronize();
  return m;
}

}  // namespace evk::stereo

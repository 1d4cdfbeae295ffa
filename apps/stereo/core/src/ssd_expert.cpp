// Host side of the expert SSD kernel: buffers, launch geometry, shared-memory size.
#include "evk/stereo/ssd_expert.hpp"

#include "evk/error.hpp"

namespace evk::stereo {

namespace {
// EX_* of ssd_expert.cu
constexpr int kTx = 64, kTy = 32, kDc = 4, kThreads = 256;
}  // namespace

std::size_t ssd_expert_smem(int r) {
  const int hw = kTx + 2 * r, rows = kTy + 2 * r;
  const int lp = (hw + 15) / 16 * 16, rp = (hw + kDc - 1 + 15) / 16 * 16, vp = (hw + 3) / 4 * 4 + 4;
  return static_cast<std::size_t>(rows) * (lp + rp) + static_cast<std::size_t>(kDc) * kTy * vp * 4;
}

SsdExpert::SsdExpert(SgmDevice& dev, int w, int h) : dev_(dev), w_(w), h_(h) {
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

void SsdExpert::compute(const Params& p) {
  validate(p);
  int r = p.radius();
  if (r > kSsdExpertMaxRadius)
    input_error("--window", "the expert SSD kernel takes windows up to " + std::to_string(2 * kSsdExpertMaxRadius + 1));
  int W = w_, H = h_, dmin = p.min_disparity, dmax = p.max_disparity, min_ssd = p.min_ssd;
  void* a[] = {&img_[0], &img_[1], &out_, &W, &H, &dmin, &dmax, &r, &min_ssd};
  const std::string name = r <= 8 ? "ssd_expert_r" + std::to_string(r) : std::string("ssd_expert");
  dev_.launch(name, Dim3{static_cast<unsigned>((W + kTx - 1) / kTx), static_cast<unsigned>((H + kTy - 1) / kTy), 1},
              Dim3{kThreads, 1, 1}, ssd_expert_smem(r), a);
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

// reg_deform affine on the GPU: the warp (trilinear, NaN outside) and the block matching of
// block_match.hpp run as CUDA kernels (affine_kernels.cu) on device-resident images; the LTS fit
// stays on the CPU in double (a few thousand points). Without CUDA this header declares nothing.
#pragma once
#if defined(EVK_HAVE_CUDA)
#include <memory>
#include <vector>

#include "core/affine/affine_reg.hpp"
#include "core/affine/block_match.hpp"
#include "core/field/gpu_field.hpp"
#include "core/types.hpp"

namespace evk::reg_deform::gpu {

// One level and direction: reference, mask, active blocks and floating image on the device.
class BlockMatcher : public Matcher {
 public:
  // Uploads both images.
  BlockMatcher(const Volume& ref, const Mask& rmask, const BlockLayout& layout, const Volume& flo);
  // Uses the images' device copies where they have one (gpu::make_image_pyramid's levels; they must
  // outlive the matcher), else uploads the host image.
  BlockMatcher(const LevelImage& ref, const Mask& rmask, const BlockLayout& layout, const LevelImage& flo);
  ~BlockMatcher() override;
  BlockMatcher(const BlockMatcher&) = delete;
  BlockMatcher& operator=(const BlockMatcher&) = delete;
  std::vector<BlockMatch> match(const Mat44& ref2flo) override;  // warp() then match_warped()
  void warp(const Mat44& ref2flo);                        // floating -> reference grid (device)
  void set_warped(const std::vector<float>& warped);      // or a given warped image (tests)
  std::vector<float> download_warped() const;
  std::vector<BlockMatch> match_warped();                 // match the current warped image
  void enqueue_match();                                   // the matching launch alone (no copy back)
  std::vector<BlockMatch> download_matches() const;
  std::size_t blocks() const { return layout_.active.size(); }
  void set_poison(bool p) { poison_ = p; }                // fill outputs with NaN/-1 before launches
  cudaStream_t stream() const { return nullptr; }
  // Kernel times (CUDA events) and the download's wall time, summed over match() calls.
  void add_times(AffineStageTimes& t) const override;

 private:
  Geometry ref_geo_, flo_geo_;
  BlockLayout layout_;
  Buffer<float> ref_own_, flo_own_, warped_;  // the images' own uploads (when not given on the device)
  const float* ref_ = nullptr;
  const float* flo_ = nullptr;
  Buffer<std::uint8_t> mask_;
  Buffer<std::uint32_t> active_;
  Buffer<float4> out_;
  bool has_mask_ = false, poison_ = false;
  cudaEvent_t ev_[3] = {};  // warp start, warp end = match start, match end
  double warp_ms_ = 0, match_ms_ = 0, download_ms_ = 0;
};

// The GPU matcher for register_affine.
MatcherFactory affine_matcher(bool poison = false);
// The GPU engine: the pyramids on the GPU, kept there (gpu::make_image_pyramid: each input uploaded
// once) and these matchers on the pyramids' device levels; all bit-identical to the CPU's.
AffineEngine affine_engine(bool poison = false);

}  // namespace evk::reg_deform::gpu
#endif

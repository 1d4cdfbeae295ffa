// Image pyramids in NiftyReg's way (reg_createImagePyramid / reg_downsampleImage), shared by
// `register` and `affine`. One level down: a Gaussian smoothing (sigma 0.7355 voxels, kernel radius
// 2, normalised by the kernel weight that falls inside the volume), then every second voxel along
// each axis whose size n satisfies n/2 >= 32 (integer division); the new size is ceil(n/2), pixdim
// and the qform/sform columns of that axis double, voxel 0 keeps its world position. A level where
// no axis is halved is still smoothed (as NiftyReg does). Masks: nearest neighbour, no smoothing.
// pyramid.cpp is compiled without FMA contraction: gpu_pyramid.hpp reproduces it bit for bit.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "core/types.hpp"

namespace evk::reg_deform {

// The axes NiftyReg halves for a volume of this size: n/2 >= 32.
std::array<bool, 3> pyramid_axes(const Geometry& g);

// The geometry after halving the given axes (ceil(n/2) voxels, doubled columns and pixdim).
Geometry downsample_geometry(const Geometry& g, const std::array<bool, 3>& axes);

inline constexpr double kPyramidSigma = 0.7355;  // voxels, NiftyReg's reg_downsampleImage

// The taps -r..r of the Gaussian, r = int(3 sigma) (empty when r = 0), not normalised.
std::vector<double> gaussian_kernel(double sigma_voxels);

// Separable Gaussian smoothing, sigma in voxels, radius int(3 sigma), normalised by the weight
// inside the volume (NiftyReg's reg_tools_kernelConvolution with a negative, i.e. voxel, sigma).
std::vector<float> gaussian_smooth(const Geometry& g, const std::vector<float>& data, double sigma_voxels,
                                   int threads = 0);
// The same with one sigma (voxels) per axis (reg_f3d's --smooR/--smooF: mm / pixdim).
std::vector<float> gaussian_smooth3(const Geometry& g, const std::vector<float>& data, const std::array<double, 3>& sigma,
                                    int threads = 0);

// One level down: smooth (sigma 0.7355 voxels) then keep voxels (2x, 2y, 2z) on the halved axes.
Volume downsample_volume(const Volume& v, const std::array<bool, 3>& axes, int threads = 0);
// One level down for a mask (no smoothing; nonzero -> 1).
Mask downsample_mask(const Geometry& g, const Mask& m, const std::array<bool, 3>& axes);

// The pyramid of `levels` levels of which the finest `used` are returned (NiftyReg's --ln / --lp):
// index 0 = coarsest used level, index used-1 = the input itself. 1 <= used <= levels.
std::vector<Volume> make_pyramid(const Volume& v, int levels, int used, int threads = 0);
// One level of one image as a registration engine holds it: the host image (block selection reads
// it) and the engine's own copy (the GPU backend: a device buffer of host->geo.voxels() floats, the
// same values; null when the engine keeps none).
struct LevelImage {
  const Volume* host = nullptr;
  const void* device = nullptr;
};
// make_pyramid's levels (index 0 = coarsest used) without copying the input: the finest used level
// is the input itself when every level built is used. Move-only; `device` owns the device copies.
struct ImagePyramid {
  std::vector<LevelImage> levels;
  std::vector<std::unique_ptr<Volume>> owned;  // the host levels computed (levels[l].host points here or at the input)
  std::shared_ptr<void> device;
  std::size_t size() const { return levels.size(); }
  const Volume& operator[](std::size_t l) const { return *levels[l].host; }
};
// make_pyramid as an ImagePyramid (CPU; no device copies).
ImagePyramid make_image_pyramid(const Volume& v, int levels, int used, int threads = 0);

// The same for a mask on `g` (empty mask: every level empty, i.e. all active).
std::vector<Mask> make_mask_pyramid(const Geometry& g, const Mask& m, int levels, int used);

}  // namespace evk::reg_deform

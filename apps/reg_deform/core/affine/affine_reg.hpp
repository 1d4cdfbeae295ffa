// Global (rigid/affine) registration in reg_aladin's way: block matching over an image pyramid,
// least trimmed squares, rigid then affine, symmetric by default (Modat et al. 2014).
//
// Per level (coarsest first; --ln levels built, the finest --lp used), with it = maxit (twice that on
// the first level): rigid for 4*it iterations then affine for it on the first level, affine for it on
// the others (--rigid-only: rigid it; --aff-direct: affine it). One iteration: warp the floating
// image through the current matrix T (trilinear, NaN outside), match the reference blocks, fit
// T' : reference block centre (world) -> T(matched position) by LTS. Symmetric: the same backwards
// (floating blocks against the reference warped through Tb), then T = mean(T', inv(Tb')) and
// Tb = mean(inv(T'), Tb') (log-Euclidean). The block matching and warping run on a Matcher: the CPU
// reference here, the GPU one in gpu_affine.hpp.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/affine/block_match.hpp"
#include "core/pyramid.hpp"
#include "core/types.hpp"

namespace evk::reg_deform {

struct AffineOptions {
  int levels = 3;           // --ln
  int levels_used = 3;      // --lp (<= levels)
  int maxit = 5;            // --maxit
  int block_percent = 50;   // --pv
  int inlier_percent = 50;  // --pi
  bool rigid_only = false;
  bool affine_direct = false;
  bool symmetric = true;    // reg_aladin's default; --nosym turns it off
  bool subvoxel = true;     // correspondences at the matches' sub-voxel refinement (not reg_aladin's; --no-subvoxel)
  int threads = 0;
};

// Time spent per stage (ms, summed over a registration). GPU stages are device time (CUDA events);
// CPU stages are wall time.
struct AffineStageTimes {
  double pyramid = 0;   // image and mask pyramids (GPU backend: the inputs' upload, the kernels, the coarser
                        // levels' download for block selection; wall)
  double select = 0;    // block selection: variances and sort (CPU, both directions concurrently)
  double upload = 0;    // matcher set-up per level: masks and block lists to the device (GPU; wall)
  double warp = 0;      // warping the floating image (GPU kernel, or CPU)
  double match = 0;     // block matching (GPU kernel, or CPU)
  double download = 0;  // matches back to the host (GPU)
  double lts = 0;       // correspondences, LTS fits (both directions concurrently) and averaging (CPU)
  double total = 0;     // the whole registration, wall
};

// Warps `flo` onto `ref`'s grid through a matrix and matches `layout`'s blocks (one per level and
// direction; implementations compute where the level images are kept: LevelImage::device when the
// engine's pyramid holds device copies, else the host images).
class Matcher {
 public:
  virtual ~Matcher() = default;
  virtual std::vector<BlockMatch> match(const Mat44& ref2flo) = 0;
  // Adds this matcher's warp/match/download (and set-up) times to t.
  virtual void add_times(AffineStageTimes& t) const { (void)t; }
};
using MatcherFactory = std::function<std::unique_ptr<Matcher>(const LevelImage& ref, const Mask& rmask,
                                                              const BlockLayout& layout, const LevelImage& flo)>;
// The CPU reference (warp_linear_cpu + match_blocks_cpu on the host images).
MatcherFactory cpu_matcher(int threads = 0);

// The image pyramid of one image (make_image_pyramid's contract: index 0 = coarsest used level).
using PyramidFn = std::function<ImagePyramid(const Volume& v, int levels, int used)>;
// Where the registration's heavy stages run: the matchers, and the pyramids (empty: make_image_pyramid
// on the CPU with AffineOptions::threads). Implicit from a MatcherFactory.
struct AffineEngine {
  AffineEngine(MatcherFactory m, PyramidFn p = {}) : matcher(std::move(m)), pyramid(std::move(p)) {}  // NOLINT
  MatcherFactory matcher;
  PyramidFn pyramid;
};

struct AffineLevelInfo {
  int nx = 0, ny = 0, nz = 0;         // reference size at this level
  int blocks = 0, blocks_back = 0;    // active blocks forward / backward
  int iterations = 0;
  int matched_last = 0;               // forward correspondences at the last iteration
  int lts_refits = 0;                 // LTS refits over the level (both directions)
  double seconds = 0;
};
struct AffineResult {
  Mat44 affine;                       // reference world -> floating world
  std::vector<AffineLevelInfo> levels;
  AffineStageTimes times;
};
using AffineProgress = std::function<void(const std::string&)>;

// `init`: the starting matrix (init_centres, init_centres_of_mass or a file). Masks: empty = all.
AffineResult register_affine(const Volume& ref, const Volume& flo, const Mask& rmask, const Mask& fmask,
                             const Mat44& init, const AffineOptions& opt, const AffineEngine& engine,
                             const AffineProgress& progress = {});

// Checks the options (InputError naming the option).
void check_affine_options(const AffineOptions& opt);

// Correspondences of one matching step: block centres (world) and T applied to their matched
// positions (world), for the blocks with a match; the integer displacement, plus the sub-voxel
// refinement when `subvoxel`.
void block_correspondences(const Geometry& ref, const BlockLayout& layout, const std::vector<BlockMatch>& m,
                           const Mat44& ref2flo, std::vector<std::array<double, 3>>& from,
                           std::vector<std::array<double, 3>>& to, bool subvoxel = false);

}  // namespace evk::reg_deform

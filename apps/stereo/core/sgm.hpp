// Semi-global matching (SGM) and the post-processing every matching method shares, built the
// libSGM way: a pipeline of named stages, each a small function with an exact integer definition
// (docs/STEREO.md, "SGM"), a CPU version here and a GPU version (sgm_gpu.hpp) that reproduces it
// bit for bit.
//
//   census     9x7 centre-symmetric census (31 bits), reads clamped to the image
//   cost       census: Hamming distance (0..31), a right pixel outside the image has census 0;
//              sad/ssd: mean absolute / root mean square difference over a window (0..255)
//   aggregate  L_r(p,d) = C(p,d) + min(L_r(p-r,d), L_r(p-r,d+-1) + P1, min_k L_r(p-r,k) + P2)
//                         - min_k L_r(p-r,k) along 4 or 8 directions r; S = sum over r
//   wta        best = the smallest d of minimal S; the right image's map from the same S
//   refine     uniqueness ratio, sub-pixel fit (parabola or equiangular), 1/16 pixel fixed point
//   median     3x3 median of the valid neighbours
//   lr_check   left-right consistency
//   speckle    small connected regions removed (CPU only; the GPU backend runs it on the host)
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace evk::stereo {

// Grey image deeper than 8 bits (values 0..maxval, maxval <= 65535).
struct Image16 {
  int width = 0, height = 0;
  int maxval = 65535;
  std::vector<std::uint16_t> pixels;
  std::uint16_t at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
};
Image16 to_image16(const Image8& im);  // same values, maxval 255
Image8 to_image8(const Image16& im);   // read_gray's scaling: v * 255 / maxval, rounded

// Disparities in 1/16 pixel (disparity * kDispScale), kInvalidQ where none survived.
constexpr int kDispScale = 16;
constexpr std::int16_t kInvalidQ = std::numeric_limits<std::int16_t>::min();
struct DisparityQ {
  int width = 0, height = 0;
  std::vector<std::int16_t> q;
  std::int16_t at(int x, int y) const { return q[static_cast<std::size_t>(y) * width + x]; }
};
FloatMap to_float(const DisparityQ& m);             // invalid -> +inf, else q / 16
DisparityQ to_q(const DisparityMap& m);              // -1 -> invalid, d -> 16 d
constexpr int kMaxAbsDisparity = 2047;               // |d| * 16 must fit an int16

enum class CostKind { census, sad, ssd };
enum class Subpixel { none, parabola, equiangular };
CostKind parse_cost(const std::string& s);           // "census" | "sad" | "ssd" (InputError otherwise)
Subpixel parse_subpixel(const std::string& s);       // "none" | "parabola" | "equiangular"
std::string to_string(CostKind c);
std::string to_string(Subpixel s);

// What every matching method shares after its winner-take-all.
struct PostParams {
  int uniqueness = 0;        // percent: invalid when some |d - best| > 1 has S(d) * 100 < S(best) * (100 + u); 0 = off
  Subpixel subpixel = Subpixel::none;
  int lr_check = -1;         // keep a pixel when |dL - dR(x - dL)| <= lr_check pixels; < 0 = off
  int median = 0;            // 0 = off, 3 = 3x3 median of the valid neighbours
  int speckle_size = 0;      // regions of at most this many pixels are invalidated; 0 = off
  int speckle_range = 1;     // neighbours differing by at most this many pixels are connected
  bool right = false;        // also compute the right image's disparity map
  bool needs_right() const { return right || lr_check >= 0; }
};

struct SgmParams {
  int min_disparity = 0;
  int max_disparity = 63;
  CostKind cost = CostKind::census;
  int window = 5;            // sad/ssd window (odd, 1..31)
  int paths = 8;             // 4 (horizontal + vertical) or 8 (+ diagonals)
  int p1 = 10, p2 = 120;     // penalties for a change of 1 / of more than 1 (libSGM's defaults)
  PostParams post;
  int count() const { return max_disparity - min_disparity + 1; }
  int cost_max() const { return cost == CostKind::census ? 31 : 255; }
};
// Throws InputError naming the option when p is unusable.
void validate(const SgmParams& p);
void validate(const PostParams& p);

// ---- stages (CPU) ----------------------------------------------------------------------------

// Census, one 31-bit code per pixel (bit k = offset k of census_offsets()).
std::vector<std::uint32_t> census_cpu(const Image8& im);
std::vector<std::uint32_t> census_cpu(const Image16& im);
// The 31 offsets (dx, dy) of the half window: dy -3..0, dx -4..4, (dy < 0 or dx < 0); bit k is set
// when I(p + o_k) > I(p - o_k).
struct Offset {
  int dx, dy;
};
std::vector<Offset> census_offsets();

// A cost volume's source: census codes (costs computed on the fly) or a stored volume [y][x][k].
struct CostVolume {
  int width = 0, height = 0, count = 0, min_disparity = 0;
  CostKind kind = CostKind::census;
  std::vector<std::uint32_t> census_left, census_right;  // census
  std::vector<std::uint8_t> stored;                       // sad / ssd: width*height*count
  int at(int x, int y, int k) const;                      // C(x, y, min_disparity + k)
};
// Builds the cost source of a pair (census codes, or the sad/ssd volume).
CostVolume cost_cpu(const Image8& left, const Image8& right, const SgmParams& p);
CostVolume cost_cpu(const Image16& left, const Image16& right, const SgmParams& p);

// The 8 directions r = (dx, dy) in the order paths use them: ->, <-, down, up (4 paths), then the
// diagonals down-right, down-left, up-right, up-left.
struct Direction {
  int dx, dy;
};
const Direction* sgm_directions();

// S(x, y, k) = sum over the first `paths` directions of L_r, [y][x][k]; rows of lines split over
// threads (threads <= 0: all cores).
std::vector<std::uint16_t> aggregate_cpu(const CostVolume& c, const SgmParams& p, int threads = 0);
// One direction's path costs L_r(x, y, k) alone ([y][x][k]; what the GPU kernel writes per direction).
std::vector<std::uint16_t> aggregate_direction_cpu(const CostVolume& c, const SgmParams& p, int dir, int threads = 0);
// The recurrence evaluated literally, one full L_r volume per direction (tests only);
// only_direction >= 0: that direction's L_r alone.
std::vector<std::uint16_t> aggregate_naive(const CostVolume& c, const SgmParams& p, int only_direction = -1);

// Winner-take-all statistics of one pixel: best index (-1 none), its cost, the costs beside it
// (-1 where the index is outside 0..count-1) and the smallest cost with |k - best| > 1 (-1: none).
struct WtaPixel {
  int best = -1;
  int s_best = 0, s_prev = -1, s_next = -1, s_second = -1;
};
struct WtaResult {
  int width = 0, height = 0, count = 0, min_disparity = 0;
  std::vector<WtaPixel> left;
  std::vector<int> right_best;  // right image: best index, -1 when no left pixel maps there
};
// From the aggregated volume: per left pixel the smallest k of minimal S; per right pixel xr the
// smallest k of minimal S(xr + min_disparity + k, k) over the k that land inside the image.
WtaResult wta_cpu(const std::vector<std::uint16_t>& s, int width, int height, int count, int min_disparity,
                  bool right, int threads = 0);

// Uniqueness + sub-pixel: the left map in 1/16 pixel; the right map (integer disparities).
DisparityQ refine_cpu(const WtaResult& w, int uniqueness, Subpixel sp);
DisparityQ right_map(const WtaResult& w);
// Sub-pixel offset in 1/16 pixel (-8..8) of a minimum s0 between s_prev and s_next (exact integers).
int subpixel_offset(int s_prev, int s0, int s_next, Subpixel sp);

DisparityQ median3_cpu(const DisparityQ& d);
// Keeps left pixel x when xr = x - round(dL) is inside, dR(xr) is valid and |dL - dR(xr)| <= max_diff.
DisparityQ lr_check_cpu(const DisparityQ& left, const DisparityQ& right, int max_diff);
// Connected regions (4-neighbours differing by at most max_diff pixels) of at most max_size pixels
// become invalid (OpenCV's filterSpeckles rule).
void speckle_cpu(DisparityQ& d, int max_size, int max_diff);

// Median, LR check and speckle in that order (the GPU backends run the same after their WTA).
struct StereoResult {
  DisparityQ left, right;  // right: empty unless PostParams::right or the LR check asked for it
};
void postprocess_cpu(StereoResult& r, const PostParams& p);

// The whole SGM pipeline on the CPU.
StereoResult sgm_cpu(const Image8& left, const Image8& right, const SgmParams& p, int threads = 0);
StereoResult sgm_cpu(const Image16& left, const Image16& right, const SgmParams& p, int threads = 0);

}  // namespace evk::stereo

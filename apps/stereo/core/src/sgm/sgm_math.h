// Exact integer helpers shared by the CPU stages and the GPU kernels of the SGM pipeline (so both
// sides evaluate literally the same expressions). Plain C++ that nvcc and host compilers accept.
#pragma once

#if defined(__CUDACC__)
#define SGM_HD __host__ __device__ __forceinline__
#else
#define SGM_HD inline
#endif

namespace sgm_math {

// The wta's right-map keys in shared memory: key of column xr at word xr + xr / 16. The lanes of a
// cell hold disparities K apart, so their atomics hit columns 16 (K 16) apart: unpadded, all 16
// lanes of a 256-disparity cell fell on 2 banks; with a word of padding per 16 they are 17 words
// apart, in distinct banks. Words for a row of W columns, rounded up to 4.
SGM_HD int wta_rkey_pos(int xr) { return xr + (xr >> 4); }
SGM_HD int wta_rkey_words(int W) { return (wta_rkey_pos(W - 1) + 1 + 3) & ~3; }

// Sub-pixel modes (values of evk::stereo::Subpixel).
enum { kSubNone = 0, kSubParabola = 1, kSubEquiangular = 2 };

// floor(a / b) for b > 0 (C++ division truncates towards zero), in I (int or long long).
template <class I>
SGM_HD I floor_div_t(I a, I b) {
  const I q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
SGM_HD long long floor_div(long long a, long long b) { return floor_div_t<long long>(a, b); }

// Offset of the minimum in 1/16 pixel, floor(16 n / den + 1/2), in -8..8:
//   parabola     n = s_prev - s_next, den = 2 (s_prev - 2 s0 + s_next)
//   equiangular  n = s_prev - s_next, den = 2 (max(s_prev, s_next) - s0)
// s0 is the first minimum, so s_prev > s0 and s_next >= s0: den >= 2. In I: long long for the CPU
// (SSD costs reach 2^31), int for sums below 2^16 (the GPU's 8- and 16-bit volumes: 32 n + den <
// 2^23, every step exact, the same value).
template <class I>
SGM_HD int subpixel_offset_t(I s_prev, I s0, I s_next, int mode) {
  const I n = s_prev - s_next;
  I den;
  if (mode == kSubParabola) {
    den = 2 * (s_prev - 2 * s0 + s_next);
  } else if (mode == kSubEquiangular) {
    den = 2 * ((s_prev > s_next ? s_prev : s_next) - s0);
  } else {
    return 0;
  }
  if (den <= 0) return 0;
  const I q = floor_div_t<I>(32 * n + den, 2 * den);
  return q < -8 ? -8 : (q > 8 ? 8 : (int)q);
}
SGM_HD int subpixel_offset(long long s_prev, long long s0, long long s_next, int mode) {
  return subpixel_offset_t<long long>(s_prev, s0, s_next, mode);
}
SGM_HD int subpixel_offset32(int s_prev, int s0, int s_next, int mode) {
  return subpixel_offset_t<int>(s_prev, s0, s_next, mode);
}

// Largest r with r * r <= v.
SGM_HD unsigned isqrt(unsigned v) {
  unsigned r = 0;
  for (unsigned bit = 1u << 15; bit != 0; bit >>= 1) {
    const unsigned t = r | bit;
    if (t * t <= v) r = t;
  }
  return r;
}

// Rounds a disparity in 1/16 pixel to whole pixels, halves up: floor((q + 8) / 16).
SGM_HD int round_q(int q) { return (int)floor_div(q + 8, 16); }

}  // namespace sgm_math

#include "core/field/niftyreg_resample.hpp"

#include <cmath>
#include <cstdint>

#include "core/field/field_cpu.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"

namespace evk::reg_deform {

namespace {

constexpr int kSincRadius = 3;

// float 4x4 as NiftyReg's mat44, built from our double matrices.
struct M44f {
  float m[4][4];
};
M44f to_float(const Mat44& d) {
  M44f f;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) f.m[i][j] = static_cast<float>(d.m[i][j]);
  return f;
}
// NiftyReg's Mat44Mul: float matrix, double sums, result cast to float.
inline void mul(const M44f& a, const float in[3], float out[3]) {
  for (int r = 0; r < 3; ++r)
    out[r] = static_cast<float>(static_cast<double>(a.m[r][0]) * in[0] + static_cast<double>(a.m[r][1]) * in[1] +
                                static_cast<double>(a.m[r][2]) * in[2] + static_cast<double>(a.m[r][3]));
}

}  // namespace

int niftyreg_kernel_taps(int inter) {
  switch (inter) {
    case 0:
    case 1: return 2;
    case 4: return 2 * kSincRadius;
    default: return 4;
  }
}

void niftyreg_kernel(int inter, float relative, float* basis) {
  if (relative < 0) relative = 0;  // rounding
  switch (inter) {
    case 0:
      basis[0] = basis[1] = 0;
      if (relative >= 0.5f) basis[1] = 1;
      else basis[0] = 1;
      return;
    case 1:
      basis[1] = relative;
      basis[0] = 1.f - relative;
      return;
    case 4: {
      float sum = 0.f;
      int j = 0;
      for (int i = -kSincRadius; i < kSincRadius; ++i, ++j) {
        const float x = relative - static_cast<float>(i);
        if (x == 0) {
          basis[j] = 1.f;
        } else if (std::fabs(x) >= static_cast<float>(kSincRadius)) {
          basis[j] = 0;
        } else {
          const double pi_x = M_PI * static_cast<double>(x);
          basis[j] = static_cast<float>(static_cast<double>(kSincRadius) * std::sin(pi_x) *
                                        std::sin(pi_x / static_cast<double>(kSincRadius)) / (pi_x * pi_x));
        }
        sum += basis[j];
      }
      for (int i = 0; i < 2 * kSincRadius; ++i) basis[i] /= sum;
      return;
    }
    default: {
      const float ff = relative * relative;
      basis[0] = (relative * ((2.f - relative) * relative - 1.f)) / 2.f;
      basis[1] = (ff * (3.f * relative - 5.f) + 2.f) / 2.f;
      basis[2] = (relative * ((4.f - 3.f * relative) * relative + 1.f)) / 2.f;
      basis[3] = (relative - 1.f) * ff / 2.f;
      return;
    }
  }
}

std::vector<float> resample_niftyreg(const Volume& flo, const Field& field_in, int inter, float pad,
                                     const std::vector<std::uint8_t>& mask, int threads) {
  const Geometry& rg = field_in.geo;
  const std::size_t nv = rg.voxels();
  if (field_in.data.size() != 3 * nv) throw std::invalid_argument("resample_niftyreg: field size");
  if (!mask.empty() && mask.size() != nv) throw std::invalid_argument("resample_niftyreg: mask size");
  Field def;
  const Field* field = &field_in;
  if (field_in.displacement) {
    def = field_in;
    to_deformation(def);
    field = &def;
  }
  const Geometry& fg = flo.geo;
  const M44f ijk = to_float(fg.vox2world.inverse());
  const int taps = niftyreg_kernel_taps(inter);
  const int offset = inter == 4 ? kSincRadius : (taps == 4 ? 1 : 0);
  const int fx = fg.nx, fy = fg.ny, fz = fg.nz;
  const float* img = flo.data.data();
  const float* px = field->data.data();
  const float* py = px + nv;
  const float* pz = py + nv;
  std::vector<float> out(nv, pad);
  parallel_for(
      nv,
      [&](std::size_t b, std::size_t e) {
        float xb[2 * kSincRadius], yb[2 * kSincRadius], zb[2 * kSincRadius];
        for (std::size_t i = b; i < e; ++i) {
          if (!mask.empty() && !mask[i]) continue;
          const float world[3] = {px[i], py[i], pz[i]};
          float pos[3];
          mul(ijk, world, pos);
          int prev[3];
          float rel[3];
          for (int a = 0; a < 3; ++a) {
            prev[a] = static_cast<int>(std::floor(pos[a]));
            rel[a] = pos[a] - static_cast<float>(prev[a]);
          }
          niftyreg_kernel(inter, rel[0], xb);
          niftyreg_kernel(inter, rel[1], yb);
          niftyreg_kernel(inter, rel[2], zb);
          for (int a = 0; a < 3; ++a) prev[a] -= offset;
          float intensity = 0;
          const bool inside = -1 < prev[0] && prev[0] + taps - 1 < fx && -1 < prev[1] && prev[1] + taps - 1 < fy &&
                              -1 < prev[2] && prev[2] + taps - 1 < fz;
          for (int c = 0; c < taps; ++c) {
            const int z = prev[2] + c;
            float ytemp = 0;
            for (int bb = 0; bb < taps; ++bb) {
              const int y = prev[1] + bb;
              float xtemp = 0;
              for (int a = 0; a < taps; ++a) {
                const int x = prev[0] + a;
                if (inside || (-1 < x && x < fx && -1 < z && z < fz && -1 < y && y < fy))
                  xtemp += img[(static_cast<std::size_t>(z) * fy + y) * fx + x] * xb[a];
                else
                  xtemp += pad * xb[a];
              }
              ytemp += xtemp * yb[bb];
            }
            intensity += ytemp * zb[c];
          }
          out[i] = intensity;
        }
      },
      threads);
  return out;
}

Field affine_field(const Geometry& ref, const Mat44& affine) {
  Mat44 a = affine;  // NiftyReg reads the matrix into floats
  for (auto& row : a.m)
    for (double& v : row) v = static_cast<float>(v);
  const M44f t = to_float(a * ref.vox2world);
  Field f;
  f.geo = ref;
  const std::size_t nv = ref.voxels();
  f.data.resize(3 * nv);
  for (int z = 0; z < ref.nz; ++z)
    for (int y = 0; y < ref.ny; ++y)
      for (int x = 0; x < ref.nx; ++x) {
        const std::size_t i = ref.index(x, y, z);
        for (int r = 0; r < 3; ++r)
          f.data[r * nv + i] = static_cast<float>(static_cast<double>(t.m[r][0]) * x + static_cast<double>(t.m[r][1]) * y +
                                                  static_cast<double>(t.m[r][2]) * z + static_cast<double>(t.m[r][3]));
      }
  return f;
}

}  // namespace evk::reg_deform

#pragma once
// The GI check's comparison of a computed field with its CPU reference: the largest error and the
// counts of unset and wrong elements. field_diff_cpu is the reference loop; field_diff_gpu
// (gpu_field.hpp) computes the same figures on the device without downloading the field.
#include <cstddef>
#include <cstdint>

namespace evk::reg_deform {

struct FieldDiff {
  double worst = 0;         // max over compared elements of max_a |got - ref| (unset elements excluded)
  std::size_t unset = 0;    // elements with a component that is not finite
  std::size_t over = 0;     // elements with error > tol
  std::size_t wrong = 0;    // elements with error > wrong_tol
};
inline bool operator==(const FieldDiff& a, const FieldDiff& b) {
  return a.worst == b.worst && a.unset == b.unset && a.over == b.over && a.wrong == b.wrong;
}

// Component a (0..2) of element i lies at [i * elem + a * comp]: float4 per element {4, 1}, three
// floats per element {3, 1}, planar x/y/z planes of n {1, n}.
struct DiffLayout {
  long long elem = 1, comp = 1;
};

// Elements with inside[i] == 0 are skipped; inside may be null (every element).
FieldDiff field_diff_cpu(const float* got, DiffLayout gl, const float* ref, DiffLayout rl, const std::uint8_t* inside,
                         std::size_t n, double tol, double wrong_tol);

}  // namespace evk::reg_deform

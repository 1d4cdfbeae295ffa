// The kernels' configurations: the paper's macros + block size, and the expert kernel's tile.
// Pure host code (no CUDA needed); kernel_variant.hpp maps a dispatch variant onto them.
#pragma once
#include <map>
#include <string>
#include <vector>


namespace evk::reg_deform {

struct KernelConfig {
  bool const_bspline = false;   // c_UseBSpline as a compile-time constant (true)
  bool const_spacing = false;   // c_controlPointVoxelSpacing as a compile-time constant (5)
  bool constant_basis = false;  // constantBasis
  bool basis_a = false;         // BasisA
  bool directx_basis = false;   // directxBasis
  bool rem_x = false;           // RemX
  int block_size = 192;         // threads per block, a multiple of 32 (the paper's default 192)

  bool macros_default() const {
    return !const_bspline && !const_spacing && !constant_basis && !basis_a && !directx_basis && !rem_x;
  }
  std::vector<std::string> defines() const;  // NVRTC/nvcc -D options of the six switches
  // The NVRTC options of a configuration: defines() + -DBLOCK_SIZE=N (what an evolved
  // __launch_bounds__(BLOCK_SIZE) needs). The GI problem compiles with exactly these.
  std::vector<std::string> compile_options() const;
  std::string describe() const;              // e.g. "constantBasis+RemX bs192" or "default bs192"
  std::map<std::string, std::string> to_map() const;
  // From name -> "true"/"false"/number (unknown names or bad values: InputError).
  static KernelConfig from_map(const std::map<std::string, std::string>& m);
  // All 64 combinations of the six switches at one block size.
  static std::vector<KernelConfig> all_combinations(int block_size = 192);
};

// The expert dense-field kernel's configuration (kernels/original/reg_deform/field_expert.cu):
// TILE_Y, the rows of a block's 32 x TILE_Y tile (8, 16 or 32; 256 threads per block).
struct ExpertConfig {
  int tile_y = 32;
  bool is_default() const { return tile_y == 32; }
  std::vector<std::string> compile_options() const;  // {"-DTILE_Y=N"}
  std::string describe() const;                      // "expert tile 32x32"
  std::map<std::string, std::string> to_map() const;
  static ExpertConfig from_map(const std::map<std::string, std::string>& m);  // InputError on bad values
};

// The logical kernels of the registry: the paper's tile kernel and the expert dense-field kernel.
inline constexpr const char* kPaperKernel = "reg_deform";
inline constexpr const char* kExpertKernel = "reg_deform_expert";

// Size class of a reference volume (the classes the gi problem validates in): "head-2mm" below
// 3 M voxels (a 2 mm head: 91x109x91 = 0.9 M), else "head-1mm" (1 mm: 197x233x189 = 8.7 M).
std::string size_class_of(long long voxels);

}  // namespace evk::reg_deform

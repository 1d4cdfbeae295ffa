#include "core/kernel_config.hpp"

#include <algorithm>

#include "evk/error.hpp"

namespace evk::stereo {

using gi::ConfigParam;
using K = ConfigParam::Kind;

std::vector<ConfigParam> config_params() {
  return {
      {"cache", K::choice, {"none", "shared", "L1", "equal"}, "none", "cache preference (cudaFuncSetCacheConfig): L1 v. shared memory"},
      {"dlcm", K::choice, {"none", "ca", "cg", "cs", "cv"}, "none", "ptxas -dlcm: default load cache operation"},
      {"OUT_TYPE", K::choice, {"float", "int", "short", "uchar"}, "float", "C type of the output disparities"},
      {"STORE_disparityPixel", K::choice, {"GLOBAL", "SHARED", "LOCAL"}, "GLOBAL", "where the per-row best disparities live"},
      {"STORE_disparityMinSSD", K::choice, {"GLOBAL", "SHARED", "LOCAL"}, "GLOBAL", "where the per-row best SSDs live"},
      {"DPER", K::number, {"1", "2", "3", "4"}, "1", "disparities tried in parallel (1 = disabled)"},
      {"XHALO", K::boolean, {"false", "true"}, "false", "dedicated threads for the 2*RADIUS halo columns"},
      {"MUL24", K::boolean, {"false", "true"}, "true", "__mul24 (true) or * (false) for index products"},
      {"GPtexturereadmode", K::choice, {"NormalizedFloat", "ElementType", "NoTextures"}, "NormalizedFloat", "texture read mode, or plain global loads"},
      {"texturefilterMode", K::choice, {"Point", "Linear"}, "Linear", "texture filter mode"},
      {"textureaddressMode", K::choice, {"Clamp", "Mirror", "Wrap"}, "Clamp", "texture address mode"},
      {"texturenormalized", K::boolean, {"false", "true"}, "false", "normalized texture coordinates"},
      {"BLOCK_W", K::number, {"8", "32", "64", "128", "192", "256", "384", "512"}, "64", "threads (columns) per block and disparity group"},
      {"ROWSperTHREAD", K::number,
       {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "20", "21", "24",
        "26", "30", "34", "40", "48", "60", "80", "120", "240"},
       "40", "rows each thread walks down"},
  };
}

gi::Config default_config() {
  gi::Config c;
  for (const auto& p : config_params()) c[p.name] = p.default_value;
  return c;
}

KernelSettings KernelSettings::from(const gi::Config& cfg, int radius) {
  const auto params = config_params();
  gi::Config c = default_config();
  for (const auto& [k, v] : cfg) {
    auto it = std::find_if(params.begin(), params.end(), [&](const ConfigParam& p) { return p.name == k; });
    if (it == params.end()) input_error("kernel config", "unknown parameter '" + k + "'");
    if (std::find(it->values.begin(), it->values.end(), v) == it->values.end())
      input_error("kernel config " + k, "illegal value '" + v + "'");
    c[k] = v;
  }
  KernelSettings s;
  s.radius = radius;
  s.cache = c["cache"];
  s.dlcm = c["dlcm"];
  s.out_type = c["OUT_TYPE"];
  s.store_pixel = c["STORE_disparityPixel"];
  s.store_minssd = c["STORE_disparityMinSSD"];
  s.dper = std::stoi(c["DPER"]);
  s.xhalo = c["XHALO"] == "true";
  s.mul24 = c["MUL24"] == "true";
  s.read_mode = c["GPtexturereadmode"];
  s.filter = c["texturefilterMode"];
  s.address = c["textureaddressMode"];
  s.normalized = c["texturenormalized"] == "true";
  s.block_w = std::stoi(c["BLOCK_W"]);
  s.rows = std::stoi(c["ROWSperTHREAD"]);
  if (s.xhalo && s.block_w <= 2 * radius)
    input_error("kernel config XHALO", "needs BLOCK_W > 2*RADIUS (" + std::to_string(s.block_w) +
                                           " <= " + std::to_string(2 * radius) + ")");
  if (s.threads() > 1024)
    input_error("kernel config DPER", "BLOCK_W*DPER = " + std::to_string(s.threads()) + " exceeds 1024 threads");
  constexpr std::size_t kMaxSmem = 227 * 1024;  // the largest opt-in shared memory of any current GPU
  if (s.smem_bytes() > kMaxSmem)
    input_error("kernel config", std::to_string(s.smem_bytes()) + " bytes of shared memory per block is too much");
  return s;
}

gi::Config KernelSettings::config() const {
  return {{"cache", cache},
          {"dlcm", dlcm},
          {"OUT_TYPE", out_type},
          {"STORE_disparityPixel", store_pixel},
          {"STORE_disparityMinSSD", store_minssd},
          {"DPER", std::to_string(dper)},
          {"XHALO", xhalo ? "true" : "false"},
          {"MUL24", mul24 ? "true" : "false"},
          {"GPtexturereadmode", read_mode},
          {"texturefilterMode", filter},
          {"textureaddressMode", address},
          {"texturenormalized", normalized ? "true" : "false"},
          {"BLOCK_W", std::to_string(block_w)},
          {"ROWSperTHREAD", std::to_string(rows)}};
}

std::string KernelSettings::effective_filter() const {
  return read_mode == "ElementType" ? "Point" : filter;
}

std::string KernelSettings::effective_address() const { return normalized ? address : "Clamp"; }

std::vector<std::string> KernelSettings::compile_options() const {
  std::vector<std::string> o = {
      "-DBLOCK_W=" + std::to_string(block_w),
      "-DROWSperTHREAD=" + std::to_string(rows),
      "-DRADIUS=" + std::to_string(radius),
      "-DDPER=" + std::to_string(dper),
      std::string("-DXHALO=") + (xhalo ? "1" : "0"),
      std::string("-DMUL24=") + (mul24 ? "1" : "0"),
      "-DOUT_TYPE=" + out_type,
      "-DSTORE_disparityPixel=" + store_pixel,
      "-DSTORE_disparityMinSSD=" + store_minssd,
      "-DGPtexturereadmode=" + read_mode,
      std::string("-Dtexturenormalized=") + (normalized ? "1" : "0"),
  };
  if (dlcm != "none") o.push_back("--ptxas-options=-dlcm=" + dlcm);
  return o;
}

bool KernelSettings::is_builtin() const {
  KernelSettings d;
  // Host-side settings (cache preference, filter and address modes) do not change the binary.
  return block_w == d.block_w && rows == d.rows && radius == d.radius && dper == d.dper && xhalo == d.xhalo &&
         mul24 == d.mul24 && out_type == d.out_type && store_pixel == d.store_pixel &&
         store_minssd == d.store_minssd && read_mode == d.read_mode && normalized == d.normalized && dlcm == d.dlcm;
}

int KernelSettings::out_bytes() const {
  if (out_type == "short") return 2;
  if (out_type == "uchar") return 1;
  return 4;
}

std::size_t KernelSettings::smem_bytes() const {
  const std::size_t cols = static_cast<std::size_t>(block_w) + (xhalo ? 0 : 2 * radius);
  std::size_t ints = dper * cols + static_cast<std::size_t>(dper - 1) * block_w;
  if (store_minssd == "SHARED") ints += static_cast<std::size_t>(rows) * block_w;
  std::size_t bytes = ints * 4;
  if (store_pixel == "SHARED") bytes += static_cast<std::size_t>(rows) * block_w * out_bytes();
  return bytes;
}

bool KernelSettings::keeps_identity() const {
  if (read_mode == "NoTextures") return true;
  return effective_address() == "Clamp";
}

}  // namespace evk::stereo

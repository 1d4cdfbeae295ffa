#include "core/kernel_config.hpp"

#include <algorithm>
#include <sstream>

#include "evk/error.hpp"

namespace evk::barracuda_exact {
namespace {
using gi::ConfigParam;

ConfigParam boolean(const std::string& name, bool def, const std::string& help) {
  return ConfigParam{name, ConfigParam::Kind::boolean, {"false", "true"}, def ? "true" : "false", help};
}

bool on(const gi::Config& c, const std::string& name) { return c.at(name) == "true"; }

}  // namespace

std::vector<ConfigParam> kernel_params() {
  std::vector<std::string> block_w = {"1", "2", "4", "8", "16"};
  for (int b = 32; b <= 1024; b += 32) block_w.push_back(std::to_string(b));
  return {
      ConfigParam{"BLOCK_W", ConfigParam::Kind::number, block_w, "64",
                  "threads per block: a power of 2 up to 32 or a multiple of 32 up to 1024"},
      ConfigParam{"cache_threads", ConfigParam::Kind::choice, {"off", "1", "2", "4", "8", "16", "32"}, "off",
                  "threads per query loading the BWT cache (power of 2 up to 32) or off"},
      boolean("kl_par", false, "calculate k and l in parallel (doubles the threads per query)"),
      boolean("occ_par", false, "do the occurrence-count loop in parallel (needs cache_threads)"),
      boolean("many_blocks", false, "2-D grid so more than 65535 blocks run in one launch"),
      boolean("direct_sequence", true, "read the next base directly from global memory, not a local query buffer"),
      boolean("direct_index", true, "locate queries by index x stride (one padded size), not via seq_index"),
      boolean("sequence_global", true, "read queries directly from global memory rather than via a texture"),
      boolean("sequence_shift81", true, "unpack bases with >> rather than a switch (off no longer supported)"),
      boolean("sequence_stride", true, "queries blocked in 32 ints (off no longer supported)"),
      boolean("mycache4", true, "load the BWT cache in 4-int (16-byte) units"),
      boolean("mycache2", false, "load it in 2-int units (only when mycache4 is off; neither: 1 int)"),
      boolean("direct_global_bwt", false, "read the BWT with plain global loads rather than __ldg()"),
      boolean("cache_global_bwt", true, "read the BWT via the per-thread cache of the current 128-base block"),
      boolean("scache_global_bwt", false, "hold that cache in 4 uint4 scalars (registers) rather than an array"),
  };
}

namespace {
const std::vector<ConfigParam>& params_once() {
  static const std::vector<ConfigParam> p = kernel_params();
  return p;
}
}  // namespace

gi::Config default_kernel_config() {
  gi::Config c;
  for (const auto& p : params_once()) c[p.name] = p.default_value;
  return c;
}

gi::Config validate_kernel_config(const gi::Config& in) {
  const auto& params = params_once();
  gi::Config c = default_kernel_config();
  for (const auto& [name, value] : in) {
    auto it = std::find_if(params.begin(), params.end(), [&](const ConfigParam& p) { return p.name == name; });
    if (it == params.end()) throw InputError("kernel config: unknown parameter " + name);
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end())
      throw InputError("kernel config: " + name + "=" + value + " is not a legal value");
    c[name] = value;
  }
  auto illegal = [](const std::string& why) { throw InputError("kernel config: illegal combination: " + why); };
  if (!on(c, "sequence_shift81")) illegal("sequence_shift81 off is no longer supported");
  if (!on(c, "sequence_stride")) illegal("sequence_stride off is no longer supported");
  const bool ct = c["cache_threads"] != "off";
  if (on(c, "occ_par") && !ct) illegal("occ_par needs cache_threads");
  if (ct && !on(c, "cache_global_bwt")) illegal("cache_threads needs cache_global_bwt");
  if (on(c, "scache_global_bwt") && !on(c, "cache_global_bwt")) illegal("scache_global_bwt needs cache_global_bwt");
  const int tps = (ct ? std::stoi(c["cache_threads"]) : 1) * (on(c, "kl_par") ? 2 : 1);
  if (tps > 32) illegal("more than 32 threads per query (cache_threads x kl_par)");
  if (std::stoi(c["BLOCK_W"]) % tps != 0) illegal("BLOCK_W is not a multiple of the threads per query");
  return c;
}

std::vector<std::string> kernel_compile_options(const gi::Config& cfg) {
  const gi::Config c = validate_kernel_config(cfg);
  std::vector<std::string> o;
  for (const auto& p : params_once()) {
    std::string v = c.at(p.name);
    if (v == "true") v = "1";
    else if (v == "false" || v == "off") v = "0";
    o.push_back("-D" + p.name + "=" + v);
  }
  return o;
}

bool is_default_config(const gi::Config& cfg) { return validate_kernel_config(cfg) == default_kernel_config(); }

KernelGeometry kernel_geometry(const gi::Config& cfg) {
  const gi::Config c = validate_kernel_config(cfg);
  KernelGeometry g;
  g.block_w = std::stoi(c.at("BLOCK_W"));
  g.threads_per_seq = (c.at("cache_threads") == "off" ? 1 : std::stoi(c.at("cache_threads"))) * (on(c, "kl_par") ? 2 : 1);
  g.many_blocks = on(c, "many_blocks");
  return g;
}

gi::Config parse_config_text(const std::string& text) {
  gi::Config c;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    auto eq = tok.find('=');
    if (eq == std::string::npos || tok[0] == '<') continue;
    c[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return c;
}

}  // namespace evk::barracuda_exact

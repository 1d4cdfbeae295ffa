#include "core/kernel_space.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/kernel_config.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/grammar.hpp"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact {
namespace {

struct Space {
  std::vector<gi::ConfigParam> params = kernel_params();
  std::uint64_t total = 1;
  Space() {
    for (const auto& p : params) total *= p.values.size();
  }
  gi::Config at(std::uint64_t i) const {
    gi::Config c;
    for (std::size_t k = params.size(); k-- > 0;) {
      const auto& v = params[k].values;
      c[params[k].name] = v[i % v.size()];
      i /= v.size();
    }
    return c;
  }
};

const Space& space() {
  static const Space s;
  return s;
}

// Distinct keys of one contiguous range. Only hashes and representatives are kept (keys are a few
// KB each); on equal hashes the keys are compared in full: the range's own keys while it is walked,
// recomputed from the representatives when ranges are merged.
struct Partial {
  std::vector<KernelProgram> groups;
  std::unordered_multimap<std::uint64_t, std::size_t> by_hash;
  std::unordered_map<std::size_t, std::string> keys;  // group -> key, only while the range is walked
  std::vector<std::uint64_t> legal_combination;
  std::vector<std::uint32_t> legal_group;
  std::uint64_t legal = 0, rejected = 0, legal_with_error = 0;

  // Adds p (key: p's key, or empty to compute it only if a hash matches); returns its group.
  std::size_t add(const std::string& source, std::string key, const KernelProgram& p, bool keep) {
    auto [b, e] = by_hash.equal_range(p.hash);
    for (auto it = b; it != e; ++it) {
      if (key.empty()) key = program_key(source, p.config);
      auto k = keys.find(it->second);
      const bool same = k != keys.end() ? k->second == key : program_key(source, groups[it->second].config) == key;
      if (same) {
        groups[it->second].members += p.members;
        return it->second;
      }
    }
    by_hash.emplace(p.hash, groups.size());
    if (keep) keys.emplace(groups.size(), std::move(key));
    groups.push_back(p);
    return groups.size() - 1;
  }
};

}  // namespace

std::uint64_t kernel_combinations() { return space().total; }
gi::Config kernel_combination(std::uint64_t i) { return space().at(i); }

std::string program_key(const std::string& source, const gi::Config& cfg) {
  std::vector<std::string> rest;
  const auto defs = gi::defines_of(kernel_compile_options(cfg), &rest);
  std::string key = gi::preprocess(source, defs);
  key += "\n--options:";
  for (const auto& o : rest) key += " " + o;
  const KernelGeometry g = kernel_geometry(cfg);
  key += "\n--launch: block " + std::to_string(g.block_w) + ", " + std::to_string(g.threads_per_seq) +
         " threads per read, " + (g.many_blocks ? "2-D grid" : "1-D grid in launches of <= 65535 blocks");
  return key;
}

KernelSpace enumerate_kernel_space(const std::string& source, const KernelSpaceOptions& o) {
  const Space& s = space();
  const std::uint64_t first = std::min(o.first, s.total), last = std::min(std::max(o.last, first), s.total);
  // fixed ranges (independent of the thread count), merged in order: the result is the walk's order.
  // One range per BLOCK_W value, so equal keys (which never differ in BLOCK_W: it is in the key)
  // meet within a range and the serial merge recomputes no key.
  const std::uint64_t kChunk = s.total / s.params[0].values.size();
  const std::size_t n_chunks = static_cast<std::size_t>((last - first + kChunk - 1) / kChunk);
  std::vector<Partial> parts(n_chunks);
  parallel_for(
      n_chunks,
      [&](std::size_t c0, std::size_t c1) {
        for (std::size_t c = c0; c < c1; ++c) {
          Partial& p = parts[c];
          const std::uint64_t end = std::min<std::uint64_t>(last, first + (c + 1) * kChunk);
          for (std::uint64_t i = first + c * kChunk; i < end; ++i) {
            const gi::Config cfg = s.at(i);
            try {
              kernel_compile_options(cfg);
            } catch (const InputError&) {
              ++p.rejected;
              continue;
            }
            ++p.legal;
            std::string key = program_key(source, cfg);
            if (key.find("#error") != std::string::npos) ++p.legal_with_error;
            const KernelProgram prog{cfg, 1, fnv1a64(key.data(), key.size())};
            p.legal_combination.push_back(i);
            p.legal_group.push_back(static_cast<std::uint32_t>(p.add(source, std::move(key), prog, true)));
          }
          p.keys.clear();
        }
      },
      o.threads);
  KernelSpace out;
  out.combinations = last - first;
  Partial all;
  for (auto& p : parts) {
    out.legal += p.legal;
    out.rejected += p.rejected;
    out.legal_with_error += p.legal_with_error;
    std::vector<std::uint32_t> to_global(p.groups.size());
    for (std::size_t g = 0; g < p.groups.size(); ++g)
      to_global[g] = static_cast<std::uint32_t>(all.add(source, {}, p.groups[g], false));
    out.legal_combination.insert(out.legal_combination.end(), p.legal_combination.begin(), p.legal_combination.end());
    for (std::uint32_t g : p.legal_group) out.legal_program.push_back(to_global[g]);
    p = Partial{};
  }
  out.programs = std::move(all.groups);
  return out;
}

}  // namespace evk::barracuda_exact

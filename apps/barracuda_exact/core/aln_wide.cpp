#include "core/aln_wide.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace evk::barracuda_exact {

namespace {

struct Edit {
  std::string_view from, to;
  int count;  // occurrences of `from` in the original
};

// The derivation: every edit must find exactly `count` occurrences (else the original changed and
// this list must be revisited). Stack entries: the packed fields as before plus a 32-bit link in a
// 32-byte struct; bucket heads and links 32-bit (NIL 0xffffffff); the duplicate check of gapped hits
// reads the (k, l) already written to the read's output instead of local copies.
constexpr Edit kEdits[] = {
    {"#if MAX_LEN > 511 || STACK_CAP > 4095\n", "#if MAX_LEN > 511\n", 1},
    {"#error \"MAX_LEN <= 511 and STACK_CAP <= 4095 (packed stack entries)\"",
     "#error \"MAX_LEN <= 511 (packed stack entries)\"", 1},
    {"#define NIL 0xfffu\n", "#define NIL 0xffffffffu\n", 1},
    {"__device__ __forceinline__ uint4 pack_entry(const entry& e, u32 link) {\n  uint4 v = {};\n",
     "struct wentry {  // a stack entry: the packed fields and the link\n  uint4 v;\n  u32 link;\n};\n\n"
     "__device__ __forceinline__ wentry pack_entry(const entry& e, u32 link) {\n  wentry r = {};\n  r.link = link;\n"
     "  uint4& v = r.v;\n",
     1},
    {" | e.state << 16 | link << 18;\n  return v;\n", " | e.state << 16;\n  return r;\n", 1},
    {"__device__ __forceinline__ void unpack_entry(const uint4& v, entry& e, u32& link) {\n",
     "__device__ __forceinline__ void unpack_entry(const wentry& r, entry& e, u32& link) {\n  const uint4& v = r.v;\n", 1},
    {"  link = v.w >> 18 & 0xfff;\n", "  link = r.link;\n", 1},
    {"  uint4* pool;  ", "  wentry* pool; ", 1},
    {"  u16 head[MAX_BUCKETS];\n", "  u32 head[MAX_BUCKETS];\n", 1},
    {"static_cast<u16>(NIL)", "NIL", 2},
    {"static_cast<u16>(slot)", "slot", 1},
    {"static_cast<u16>(link)", "link", 1},
    {"  s.pool = stack + tid;\n", "  s.pool = reinterpret_cast<wentry*>(stack) + tid;\n", 1},
    {"  u64 found_k[ALN_CAP] = {}, found_l[ALN_CAP] = {};\n", "", 1},
    {"if (found_k[j] == k && found_l[j] == l) {", "if (out[3 * j] == k && out[3 * j + 1] == l) {", 1},
    {"        found_k[n_aln] = k;\n        found_l[n_aln] = l;\n", "", 1},
};

int occurrences(std::string_view text, std::string_view what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string_view::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace

std::string inexact_wide_source(std::string_view original) {
  std::string s(original);
  for (const Edit& e : kEdits) {
    const int n = occurrences(s, e.from);
    if (n != e.count)
      throw std::runtime_error("wide inexact kernel: the original kernel has " + std::to_string(n) + " occurrences of \"" +
                               std::string(e.from.substr(0, 60)) + "\", " + std::to_string(e.count) + " expected");
    std::string out;
    std::size_t at = 0;
    for (std::size_t p = s.find(e.from); p != std::string::npos; p = s.find(e.from, at)) {
      out.append(s, at, p - at).append(e.to);
      at = p + e.from.size();
    }
    s = out.append(s, at, std::string::npos);
  }
  return "// The wide inexact kernel: derived from inexact.cu by apps/barracuda_exact/core/aln_wide.cpp\n"
         "// (32-bit stack links in 32-byte entries; hits deduplicated from the output).\n" +
         s;
}

std::vector<AlnPassLimits> aln_pass_limits(const AlnOptions& opt, int stack_cap, int aln_cap) {
  const std::int64_t queue = std::max(opt.max_entries, 0);
  const int bound = static_cast<int>(std::min<std::int64_t>(queue + 8, kAlnWideMaxStackCap));
  std::vector<AlnPassLimits> out;
  AlnPassLimits prev{stack_cap, aln_cap};
  for (const AlnPassLimits p : {AlnPassLimits{16383, 128}, AlnPassLimits{262143, 1024}, AlnPassLimits{bound, 4096}}) {
    const AlnPassLimits q{std::min(p.stack_cap, bound), p.aln_cap};
    if (q.stack_cap <= prev.stack_cap && q.aln_cap <= prev.aln_cap) continue;
    out.push_back(q);
    prev = {std::max(prev.stack_cap, q.stack_cap), std::max(prev.aln_cap, q.aln_cap)};
  }
  return out;
}

}  // namespace evk::barracuda_exact

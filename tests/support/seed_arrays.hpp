// Checks shared by the tools' seed-hardening tests (docs/GI.md, "Reads before writes"): the GI seeds
// value-initialise their per-thread arrays and structs, so a candidate that reads one before writing
// it (a deleted fill, a swapped statement, a configuration that skips the fill) reads zeros instead of
// undefined values. NVRTC's warning #549, which nvrtc_compile turns into a refusal, never fires for
// arrays, structs or shared memory, so without the initialisers such a candidate compiles, runs
// whatever the optimiser made of the undefined read, and may pass the check by luck.
//
// - declarations_of / expect_value_initialised scan a seed's text: every declaration of the listed
//   names has an empty-brace initialiser (`T a[N] = {};`, `T a{};`).
// - expect_reads_zeros compiles a crafted candidate (a genome, typically deleting the statement that
//   fills an array) with NVRTC, checks it is accepted, and checks it compiles to the same machine
//   code as itself with the arrays zeroed explicitly right after their declaration: it behaves as if
//   it read zeros. On a seed without the initialiser the explicit zeroing is live code, so the two
//   differ and the check fails.
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

#include "evk/device.hpp"
#include "evk/gi/genome.hpp"
#include "evk/gi/problem.hpp"
#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_library.hpp"
#endif

namespace evk::testing {

struct SeedDecl {
  int line = 0;             // 1-based
  bool value_init = false;  // `= {}` or `{}`
  std::string text;         // the line
};

inline std::string seed_trim(const std::string& s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// Every declaration of `name` with type `type` in `src`, one declaration statement per line (the
// seeds' convention): `[[maybe_unused]] const TYPE a[N] = {}, NAME[M] = {};` and the like.
inline std::vector<SeedDecl> declarations_of(const std::string& src, const std::string& type, const std::string& name) {
  std::vector<SeedDecl> out;
  std::istringstream in(src);
  std::string raw;
  for (int n = 1; std::getline(in, raw); ++n) {
    std::string code = raw.substr(0, raw.find("//"));
    code = seed_trim(code);
    for (const char* pre : {"[[maybe_unused]]", "const ", "static "})
      if (code.rfind(pre, 0) == 0) code = seed_trim(code.substr(std::string(pre).size()));
    if (code.rfind(type, 0) != 0 || code.size() <= type.size() || !std::isspace(static_cast<unsigned char>(code[type.size()])))
      continue;
    if (code.empty() || code.back() != ';') continue;
    const std::string rest = code.substr(type.size(), code.size() - type.size() - 1);
    // declarators at top-level commas
    std::vector<std::string> decls(1);
    int depth = 0;
    for (char c : rest) {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') --depth;
      if (c == ',' && depth == 0) {
        decls.emplace_back();
        continue;
      }
      decls.back() += c;
    }
    for (std::string d : decls) {
      d = seed_trim(d);
      while (!d.empty() && (d[0] == '*' || d[0] == '&')) d = seed_trim(d.substr(1));
      std::size_t e = 0;
      while (e < d.size() && (std::isalnum(static_cast<unsigned char>(d[e])) || d[e] == '_')) ++e;
      if (d.substr(0, e) != name) continue;
      std::string after = seed_trim(d.substr(e));
      if (!after.empty() && after[0] == '[') after = seed_trim(after.substr(after.find(']') + 1));
      std::string compact;
      for (char c : after)
        if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
      out.push_back({n, compact == "={}" || compact == "{}", raw});
    }
  }
  return out;
}

// Each (type, name): at least `min_count` declarations, every one value-initialised.
inline void expect_value_initialised(const std::string& src, const std::string& what,
                                     const std::vector<std::pair<std::string, std::string>>& names, int min_count = 1) {
  for (const auto& [type, name] : names) {
    const auto d = declarations_of(src, type, name);
    EXPECT_GE(static_cast<int>(d.size()), min_count) << what << ": no declaration of " << type << " " << name;
    for (const auto& x : d)
      EXPECT_TRUE(x.value_init) << what << " line " << x.line << ": " << type << " " << name
                                << " lost its value-initialiser (`= {}`):\n" << x.text;
  }
}

// 1-based number of the first line of `src` at or after line `from` whose code (before any `//`)
// contains `text`; 0 if none.
// The genome edit that deletes the seed statement whose trimmed line is `text` (`<_K_n>`, n its
// line); a test failure when the seed has no such statement.
inline std::string seed_delete(const gi::Problem& p, const std::string& text) {
  std::istringstream in(p.kernel_source());
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (seed_trim(l) == text) return "<_K_" + std::to_string(n) + ">";
  ADD_FAILURE() << "no statement '" << text << "' in " << p.name();
  return "";
}

inline int seed_line_of(const std::string& src, const std::string& text, int from = 1) {
  std::istringstream in(src);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n)
    if (n >= from && l.substr(0, l.find("//")).find(text) != std::string::npos) return n;
  return 0;
}

#if defined(EVK_HAVE_CUDA)
inline NvrtcResult seed_compile(const gi::Problem& p, const gi::Variant& v, const std::string& source) {
  NvrtcRequest req;
  req.source = source;
  req.options = p.compile_options(v.config);
  req.options.insert(req.options.end(), v.options.begin(), v.options.end());
  req.cc = 90;
  return nvrtc_compile(req);
}

// `genome` (a crafted candidate) is accepted by nvrtc_compile and compiles to the same sm_90 code
// as itself with `zeroing` (statements that zero the arrays) inserted after the arrays' declaration:
// the first line whose code contains `decl` (after the first line containing `after`, if given).
inline void expect_reads_zeros(const gi::Problem& p, const std::string& genome, const std::string& decl,
                               const std::string& zeroing, const std::string& after = "") {
  SCOPED_TRACE(p.name() + " candidate '" + genome + "'");
  const gi::Variant v = gi::apply_genome(p, genome);
  const NvrtcResult a = seed_compile(p, v, v.source);
  ASSERT_TRUE(a.ok) << "the candidate is refused (it should compile: an unfilled array is no #549):\n"
                    << a.log.substr(0, 2000);
  const int from = after.empty() ? 1 : seed_line_of(v.source, after);
  ASSERT_GT(from, 0) << "no line containing '" << after << "' in the applied source";
  const int at = seed_line_of(v.source, decl, from);
  ASSERT_GT(at, 0) << "no line containing '" << decl << "' in the applied source";
  std::string zeroed;
  std::istringstream in(v.source);
  std::string l;
  for (int n = 1; std::getline(in, l); ++n) {
    zeroed += l + "\n";
    if (n == at) zeroed += zeroing + "\n";
  }
  const NvrtcResult b = seed_compile(p, v, zeroed);
  ASSERT_TRUE(b.ok) << b.log.substr(0, 2000);
  EXPECT_TRUE(a.cubin == b.cubin) << "the candidate's code (" << a.cubin.size() << " bytes) is not that of "
                                  << "the same candidate with `" << zeroing << "` after `" << decl << "` ("
                                  << b.cubin.size() << " bytes): it does not read zeros";
}

// GPU: the Problem's own evaluation of a candidate on case `seed` of its first size class: output
// poisoned, one launch, the check with the app's penalties (as the search runs a candidate).
inline gi::Check seed_candidate_check(const gi::Problem& p, const std::string& genome, std::uint64_t seed) {
  const gi::Variant v = gi::apply_genome(p, genome);
  NvrtcRequest req;
  req.source = v.source;
  req.options = p.compile_options(v.config);
  req.options.insert(req.options.end(), v.options.begin(), v.options.end());
  req.cc = gpu_environment().devices.at(0).cc();
  const NvrtcResult r = nvrtc_compile(req);
  if (!r.ok) {
    ADD_FAILURE() << genome << ": " << r.log.substr(0, 2000);
    return {};
  }
  CudaLibrary lib(r.cubin.data());
  auto ev = p.make_evaluation(seed, false);
  ev->poison(nullptr);
  ev->launch(lib.kernel(p.kernel_entry().c_str()), v.config, nullptr);
  return ev->check(nullptr);
}
#endif

}  // namespace evk::testing

// The engine's additions around the genome: NVRTC option genes (text, apply, the source tag the apps
// read, NVRTC accepting them) and the prelude every evolved source carries (loop-guard deadline,
// per-SM clock ticks scope right after the kernel's opening brace).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <functional>
#include <set>

#include "app_problems.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "evk/gi/evaluate.hpp"
#include "evk/gi/genome.hpp"
#include "toy_problem.hpp"

namespace evk::gi {
namespace {

std::string rule(const Grammar& g, const std::string& prefix, const std::string& needle) {
  for (std::size_t i = 0; i < g.lines.size(); ++i)
    if (g.lines[i].text.find(needle) != std::string::npos) return prefix + std::to_string(i + 1);
  return "";
}

TEST(GiOptionGenes, TextRoundTripsAndApplyGivesTheOptions) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  const std::string del = "<" + rule(g, "_K_", "scratch[i] = acc;") + ">";
  const std::string text = "BLOCK_W=256 nvrtc:maxrregcount=64 nvrtc:ptxas-O=2 nvrtc:vectorize=true " + del;
  Genome x = parse_genome(g, text);
  EXPECT_EQ(x.options.at("nvrtc:maxrregcount"), "64");
  EXPECT_EQ(x.config.count("nvrtc:maxrregcount"), 0u);  // the app's config never sees option genes
  EXPECT_EQ(format_genome(g, x), text);
  EXPECT_EQ(parse_genome(g, format_genome(g, x)), x);
  // order in the text does not matter; default values are no change
  EXPECT_EQ(format_genome(g, parse_genome(g, "nvrtc:vectorize=true " + del + " nvrtc:ptxas-O=3 BLOCK_W=256")),
            "BLOCK_W=256 nvrtc:vectorize=true " + del);
  EXPECT_TRUE(is_empty(g, parse_genome(g, "nvrtc:maxrregcount=0 nvrtc:ptxas-O=3")));
  EXPECT_FALSE(is_empty(g, parse_genome(g, "nvrtc:maxrregcount=32")));
  EXPECT_THROW(parse_genome(g, "nvrtc:maxrregcount=65"), InputError);
  EXPECT_THROW(parse_genome(g, "nvrtc:ptxas-O=4"), InputError);
  EXPECT_THROW(parse_genome(g, "nvrtc:use_fast_math=true"), InputError);

  const std::vector<std::string> want{"--maxrregcount=64", "-Xptxas=-O2", "--extra-device-vectorization"};
  Variant v = apply(g, x);
  EXPECT_EQ(v.options, want);
  EXPECT_EQ(v.config, parse_genome(g, "BLOCK_W=256").config);
  EXPECT_EQ(source_nvrtc_options(v.source), want);  // what the apps append to their NVRTC options
  Variant via_app = apply_genome(*p, text);
  EXPECT_EQ(via_app.options, want);
  EXPECT_EQ(source_nvrtc_options(via_app.source), want);
  // no option genes: no tag, no options
  Variant plain = apply(g, parse_genome(g, del));
  EXPECT_TRUE(plain.options.empty());
  EXPECT_TRUE(source_nvrtc_options(plain.source).empty());
  EXPECT_TRUE(source_nvrtc_options(p->kernel_source()).empty());
}

TEST(GiOptionGenes, SearchOperatorsLeaveThemToTuneAndCrossoverMixesThem) {
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  Rng rng(5);
  Genome e = empty_genome(g);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(mutate(g, e, rng).options, e.options);
  Genome a = parse_genome(g, "nvrtc:maxrregcount=32 nvrtc:ptxas-O=1");
  Genome b = parse_genome(g, "nvrtc:maxrregcount=128 nvrtc:vectorize=true");
  std::set<std::string> regs;
  for (int i = 0; i < 200; ++i) {
    Genome c = crossover(a, b, rng);
    for (const auto& [k, v] : c.options) EXPECT_TRUE(v == a.options.at(k) || v == b.options.at(k)) << k << "=" << v;
    regs.insert(c.options.at("nvrtc:maxrregcount"));
  }
  EXPECT_EQ(regs.size(), 2u);  // both parents' values occur
}

TEST(GiOptionGenes, NvrtcAcceptsEveryOptionValue) {
  if (nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA: no NVRTC";
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  std::vector<CompileRequest> reqs;
  for (const auto& prm : g.option_params)
    for (const auto& val : prm.values) {
      if (val == prm.default_value) continue;
      Variant v = apply(g, parse_genome(g, prm.name + "=" + val));
      ASSERT_FALSE(v.options.empty());
      CompileRequest r;
      r.source = v.source;
      r.options = p->compile_options(v.config);
      r.options.insert(r.options.end(), v.options.begin(), v.options.end());
      reqs.push_back(r);
    }
  ASSERT_EQ(reqs.size(), 9u + 3u + 1u);
  auto res = compile_parallel(reqs, 90, /*want_cubin=*/true, 2, "", false);
  for (std::size_t i = 0; i < res.size(); ++i) EXPECT_TRUE(res[i].ok) << reqs[i].options.back() << ": " << res[i].log;
  // a register limit changes the code (the toy uses more than 32 registers without one)
  EXPECT_NE(res[0].code_hash, res[1].code_hash);
}

struct AppCase {
  const char* name;
  std::function<std::unique_ptr<Problem>()> make;
};
const AppCase kApps[] = {
    {"toy", [] { return testing::make_toy_problem(); }},
    {"stereo", evk::app_problems::stereo},
    {"reg_deform", evk::app_problems::reg_deform},
    {"reg_deform_expert", evk::app_problems::reg_deform_expert},
    {"barracuda_exact", evk::app_problems::barracuda_exact},
};

// The text right after the entry's opening brace in s.
std::string after_body_open(const std::string& s, const std::string& entry) {
  // the signature's closing parenthesis is followed by " {" on the same line in all our kernels
  auto at = s.find(entry + "(");
  if (at == std::string::npos) return "";
  auto brace = s.find(") {\n", at);
  return brace == std::string::npos ? "" : s.substr(brace + 4, 40);
}

TEST(GiInstrument, EveryEvolvedSourceCarriesDeadlineAndTickScope) {
  for (const auto& a : kApps) {
    SCOPED_TRACE(a.name);
    auto p = a.make();
    Grammar g = make_grammar(*p);
    const std::string lb = "<" + rule(g, "launchbounds_K_", p->kernel_entry() + "(") + "><launchbounds_K0>";
    for (const std::string& genome : {std::string(""), lb}) {  // plain and rebuilt signature
      Variant v = apply(g, parse_genome(g, genome));
      const std::string& s = v.source;
      EXPECT_NE(s.find("extern \"C\" __global__ void evk_gi_stamp(unsigned long long budget_ns)"), std::string::npos);
      EXPECT_NE(s.find("__device__ unsigned long long evk_gi_sm_ticks[3 * EVK_GI_MAX_SM];"), std::string::npos);
      EXPECT_NE(s.find("#define EVK_GI_OK(g) ((g)++ < EVK_GI_LOOP_LIMIT && (((g) & 255u) != 0u || evk_gi_in_time()))"),
                std::string::npos);
      EXPECT_LT(s.find("evk_gi_stamp"), s.find(p->kernel_entry() + "("));  // prelude at file scope, first
      EXPECT_EQ(after_body_open(s, p->kernel_entry()).rfind("  evk_gi_tick_scope evk_gi_ticks_;\n", 0), 0u)
          << after_body_open(s, p->kernel_entry());
      std::size_t n = 0;
      for (auto q = s.find("evk_gi_tick_scope evk_gi_ticks_;"); q != std::string::npos; q = s.find("evk_gi_tick_scope evk_gi_ticks_;", q + 1)) ++n;
      EXPECT_EQ(n, 1u);
    }
    Variant e = apply(g, empty_genome(g));  // the search's reference is instrumented the same way
    EXPECT_NE(e.source.find("evk_gi_tick_scope evk_gi_ticks_;"), std::string::npos);
    EXPECT_EQ(apply_genome(*p, "").source, p->kernel_source());  // the human original stays untouched
  }
}

TEST(GiInstrument, InstrumentedSourcesCompileWithTheStampKernelAndTickArray) {
  if (nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA: no NVRTC";
  auto p = testing::make_toy_problem();
  Grammar g = make_grammar(*p);
  Variant v = apply(g, empty_genome(g));
  CompileRequest on, off;
  on.source = off.source = v.source;
  on.options = off.options = p->compile_options(v.config);
  on.options.push_back("-DEVK_GI_TICKS=1");  // off by default; `gi run --ticks` turns it on
  auto res = compile_parallel({on, off}, 90, true, 2, "", false);
  ASSERT_TRUE(res[0].ok) << res[0].log;
  ASSERT_TRUE(res[1].ok) << res[1].log;
  auto has = [](const std::vector<char>& bin, const std::string& sym) {
    return std::search(bin.begin(), bin.end(), sym.begin(), sym.end()) != bin.end();
  };
  EXPECT_TRUE(has(res[0].cubin, "evk_gi_stamp"));
  EXPECT_TRUE(has(res[0].cubin, "evk_gi_sm_ticks"));
  EXPECT_TRUE(has(res[0].cubin, "toy_filter"));
  EXPECT_NE(res[0].code_hash, res[1].code_hash);  // the tick scope is real code
}

}  // namespace
}  // namespace evk::gi

namespace evk::gi {
namespace {

// A deletion of a plain line inside a loop (so the loop gets a guard), or "" when there is none.
std::string loop_edit(const Grammar& g) {
  for (const auto& r : g.rules) {
    if (r.type != RuleType::line) continue;
    const std::string genome = "<" + r.name + ">";
    if (apply(g, parse_genome(g, genome)).source.find("EVK_GI_OK(evk_gi_guard_") != std::string::npos) return genome;
  }
  return "";
}

std::size_t count(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (auto q = s.find(needle); q != std::string::npos; q = s.find(needle, q + 1)) ++n;
  return n;
}

// `gi apply` (no --as-searched): the original plus the edits and only the guards they need, no engine
// prelude; config-only genomes give the original text itself.
TEST(GiApplyReadable, OriginalPlusEditsAndTheGuardsTheyNeed) {
  for (const auto& a : kApps) {
    SCOPED_TRACE(a.name);
    auto p = a.make();
    Grammar g = make_grammar(*p);
    const std::string edit = loop_edit(g);
    ASSERT_FALSE(edit.empty());
    ApplyOptions readable;
    readable.engine = false;
    const Variant r = apply(g, parse_genome(g, edit), readable), s = apply(g, parse_genome(g, edit));
    for (const char* engine : {"evk_gi_stamp", "evk_gi_tick_scope", "evk_gi_sm_ticks", "EVK_GI_DEADLINE", "evk_gi_in_time"}) {
      EXPECT_EQ(r.source.find(engine), std::string::npos) << engine;
      EXPECT_NE(s.source.find(engine), std::string::npos) << engine;
    }
    EXPECT_EQ(count(r.source, "EVK_GI_OK(evk_gi_guard_"), count(s.source, "EVK_GI_OK(evk_gi_guard_"));
    EXPECT_EQ(count(r.source, "#define EVK_GI_OK(g)"), 1u);
    EXPECT_EQ(apply_genome(*p, edit).source, r.source);  // what the tools run
    // config only: the kernel file's text
    const ConfigParam& prm = g.params.front();
    std::string other;
    for (const auto& v : prm.values)
      if (v != prm.default_value) other = v;
    const Variant c = apply(g, parse_genome(g, prm.name + "=" + other), readable);
    EXPECT_EQ(c.source, p->kernel_source());
    EXPECT_EQ(c.config.at(prm.name), other);
  }
}

// The PTX of the entry kernel, with branch labels numbered independently of the function's place in
// the file ($L__BB<function>_<block> -> $L__BB_<block>: the searched source has the prelude's
// functions first).
std::string entry_ptx(const std::string& ptx, const std::string& entry) {
  const auto at = ptx.find(".entry " + entry + "(");
  if (at == std::string::npos) return "";
  const auto end = ptx.find("\n}\n", at);
  const std::string body = ptx.substr(at, end == std::string::npos ? std::string::npos : end - at);
  return std::regex_replace(std::regex_replace(body, std::regex(R"(\$L__BB[0-9]+_)"), "$$L__BB_"),
                            std::regex(R"(__local_depot[0-9]+)"), "__local_depot");
}

TEST(GiApplyReadable, CompilesToTheSearchedKernel) {
  if (nvrtc_version().empty()) GTEST_SKIP() << "built without CUDA: no NVRTC";
  for (const auto& a : kApps) {
    SCOPED_TRACE(a.name);
    auto p = a.make();
    Grammar g = make_grammar(*p);
    const std::string genome = loop_edit(g);
    ApplyOptions readable;
    readable.engine = false;
    const Genome x = parse_genome(g, genome);
    std::string ptx[2];
    for (int k = 0; k < 2; ++k) {
      const Variant v = k ? apply(g, x) : apply(g, x, readable);
      NvrtcRequest req;
      req.source = v.source;
      req.options = p->compile_options(v.config);
      req.want_cubin = false;
      req.want_ptx = true;
      const NvrtcResult res = nvrtc_compile(req);
      ASSERT_TRUE(res.ok) << res.log;
      ptx[k] = entry_ptx(std::string(res.ptx.begin(), res.ptx.end()), p->kernel_entry());
      ASSERT_FALSE(ptx[k].empty());
    }
    EXPECT_TRUE(ptx[0] == ptx[1]) << "the readable source compiles to other code than the searched one";
    if (ptx[0] != ptx[1] && std::getenv("EVK_DUMP_PTX")) {  // keep both for diffing
      std::ofstream(std::string("/tmp/readable-") + a.name + ".ptx") << ptx[0];
      std::ofstream(std::string("/tmp/searched-") + a.name + ".ptx") << ptx[1];
    }
  }
}

}  // namespace
}  // namespace evk::gi

// Configuration parameters, compile options, the gi problem and the grammar conventions of the
// kernel source; NVRTC (no GPU needed) compiles the kernel for every legal option value.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <regex>
#include <set>
#include <sstream>

#include "core/kernel_config.hpp"
#include "evk/cuda_library.hpp"
#include "evk/error.hpp"
#include "gi/gi_problem.hpp"

using namespace evk::stereo;

TEST(StereoConfig, TwelvePaperParametersPlusTiling) {
  auto ps = config_params();
  ASSERT_EQ(ps.size(), 14u);
  std::set<std::string> names;
  for (const auto& p : ps) {
    names.insert(p.name);
    EXPECT_NE(std::find(p.values.begin(), p.values.end(), p.default_value), p.values.end()) << p.name;
  }
  for (const char* n : {"cache", "dlcm", "OUT_TYPE", "STORE_disparityPixel", "STORE_disparityMinSSD", "DPER", "XHALO",
                        "MUL24", "GPtexturereadmode", "texturefilterMode", "textureaddressMode", "texturenormalized",
                        "BLOCK_W", "ROWSperTHREAD"})
    EXPECT_TRUE(names.count(n)) << n;
  KernelSettings d = KernelSettings::from({});
  EXPECT_EQ(d.block_w, 64);
  EXPECT_EQ(d.rows, 40);
  EXPECT_TRUE(d.is_builtin());
  EXPECT_TRUE(d.keeps_identity());
}

TEST(StereoConfig, CompileOptionsAndIllegalCombinations) {
  auto o = KernelSettings::from({{"BLOCK_W", "128"}, {"dlcm", "cg"}}, 7).compile_options();
  EXPECT_NE(std::find(o.begin(), o.end(), "-DBLOCK_W=128"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-DRADIUS=7"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "--ptxas-options=-dlcm=cg"), o.end());
  EXPECT_FALSE(KernelSettings::from({{"BLOCK_W", "128"}}).is_builtin());
  EXPECT_TRUE(KernelSettings::from({{"cache", "L1"}, {"texturefilterMode", "Point"}}).is_builtin());
  EXPECT_THROW(KernelSettings::from({{"XHALO", "true"}, {"BLOCK_W", "8"}}), evk::InputError);
  EXPECT_THROW(KernelSettings::from({{"DPER", "3"}, {"BLOCK_W", "512"}}), evk::InputError);
  EXPECT_THROW(KernelSettings::from({{"BLOCK_W", "100"}}), evk::InputError);
  EXPECT_THROW(KernelSettings::from({{"NOPE", "1"}}), evk::InputError);
  EXPECT_THROW(KernelSettings::from({{"ROWSperTHREAD", "240"}, {"BLOCK_W", "512"},
                                     {"STORE_disparityPixel", "SHARED"}, {"STORE_disparityMinSSD", "SHARED"}}),
               evk::InputError);
}

TEST(StereoConfig, IdentityPrediction) {
  // Only wrap/mirror addressing with normalized coordinates changes the edge reads.
  EXPECT_TRUE(KernelSettings::from({{"textureaddressMode", "Wrap"}}).keeps_identity());
  EXPECT_FALSE(KernelSettings::from({{"textureaddressMode", "Wrap"}, {"texturenormalized", "true"}}).keeps_identity());
  EXPECT_FALSE(KernelSettings::from({{"textureaddressMode", "Mirror"}, {"texturenormalized", "true"}}).keeps_identity());
  EXPECT_TRUE(KernelSettings::from({{"textureaddressMode", "Mirror"}, {"texturenormalized", "true"},
                                    {"GPtexturereadmode", "NoTextures"}}).keeps_identity());
}

TEST(StereoGiProblem, DescribesTheKernel) {
  auto p = make_gi_problem();
  EXPECT_EQ(p->name(), "stereo");
  EXPECT_EQ(p->kernel_entry(), "stereoKernel");
  const std::string src = p->kernel_source();
  EXPECT_NE(src.find("extern \"C\" __global__ void stereoKernel("), std::string::npos);
  EXPECT_EQ(p->config_params().size(), 14u);
  EXPECT_EQ(p->default_config(), default_config());
  EXPECT_EQ(p->default_population(), 100);
  EXPECT_EQ(p->default_generations(), 50);
  EXPECT_THROW(p->compile_options({{"XHALO", "true"}, {"BLOCK_W", "8"}}), evk::InputError);
}

TEST(StereoGiProblem, SourceFollowsGrammarConventions) {
  const std::string src = make_gi_problem()->kernel_source();
  std::istringstream in(src);
  std::string line;
  int begins = 0, ends = 0, statements = 0;
  bool inside = false;
  const std::regex header(R"(^\s*(for|if)\s*\()");
  while (std::getline(in, line)) {
    if (line.find("//@gi begin") != std::string::npos) {
      ++begins;
      inside = true;
      continue;
    }
    if (line.find("//@gi end") != std::string::npos) {
      ++ends;
      inside = false;
      continue;
    }
    if (!inside) continue;
    EXPECT_EQ(line.find('#'), std::string::npos) << "preprocessor line in the evolvable part: " << line;
    if (std::regex_search(line, header)) {
      // The whole header (balanced parentheses) is on this line, with no body after it.
      int depth = 0;
      std::size_t close = std::string::npos;
      for (std::size_t i = line.find('('); i < line.size(); ++i) {
        depth += line[i] == '(';
        depth -= line[i] == ')';
        if (depth == 0) {
          close = i;
          break;
        }
      }
      ASSERT_NE(close, std::string::npos) << "header split over lines: " << line;
      EXPECT_EQ(line.find_first_not_of(" \t", close + 1), std::string::npos) << line;
    } else {
      // One statement per line.
      EXPECT_LE(std::count(line.begin(), line.end(), ';'), 1) << line;
      statements += std::count(line.begin(), line.end(), ';');
    }
  }
  EXPECT_EQ(begins, 1);
  EXPECT_EQ(ends, 1);
  EXPECT_GT(statements, 20);
}

#if defined(EVK_HAVE_CUDA)
TEST(StereoNvrtc, EveryOptionValueCompiles) {
  auto p = make_gi_problem();
  std::vector<evk::gi::Config> cfgs;
  for (const auto& param : config_params())
    for (const auto& v : param.values) {
      if (v == param.default_value || param.name == "ROWSperTHREAD") continue;
      evk::gi::Config c;
      c[param.name] = v;
      cfgs.push_back(c);
    }
  cfgs.push_back({{"ROWSperTHREAD", "1"}});
  cfgs.push_back({{"ROWSperTHREAD", "240"}});
  // The paper's evolved K20c configuration.
  cfgs.push_back({{"DPER", "2"}, {"STORE_disparityMinSSD", "SHARED"}, {"XHALO", "true"},
                  {"STORE_disparityPixel", "SHARED"}, {"ROWSperTHREAD", "5"}});
  std::vector<std::future<std::string>> jobs;
  for (const auto& c : cfgs)
    jobs.push_back(std::async(std::launch::async, [&p, c] {
      evk::NvrtcRequest req;
      req.source = p->kernel_source();
      req.options = p->compile_options(c);
      req.cc = 90;
      auto r = evk::nvrtc_compile(req);
      std::string what;
      for (const auto& [k, v] : c) what += k + "=" + v + " ";
      return r.ok ? std::string() : what + ": " + r.log;
    }));
  for (auto& j : jobs) EXPECT_EQ(j.get(), "");
}
#endif

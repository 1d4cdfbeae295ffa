// Checks shared by the tools' shipped-variant tests (kernels/evolved/<tool>/*.genome), CPU only:
// every file is a built-in variant of the tool with provenance and (CUDA builds) an embedded fatbin;
// each compiles with NVRTC and the tool's run-time request for it finds the embedded fatbin.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "evk/dispatch.hpp"
#include "evk/embedded.hpp"
#if defined(EVK_HAVE_CUDA)
#include "evk/cuda_library.hpp"
#endif

namespace evk::testing {

inline std::vector<Variant> builtin_variants(const Registry& reg) {
  std::vector<Variant> out;
  for (const auto& v : reg.variants())
    if (v.source == VariantSource::builtin && !v.is_original()) out.push_back(v);
  return out;
}

inline void expect_every_genome_file_built_in(const Registry& reg, const std::filesystem::path& dir,
                                              const std::string& kernel) {
  std::set<std::string> files, ids;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".genome") files.insert(e.path().stem().string());
  for (const auto& v : builtin_variants(reg)) {
    ids.insert(v.id);
    EXPECT_EQ(v.kernel, kernel);
    EXPECT_GT(v.cc, 0) << v.id << ": a shipped variant needs '# cc:'";
    EXPECT_FALSE(v.header_value("validated").empty()) << v.id << ": no validation figures in its provenance";
    EXPECT_FALSE(v.header_value("date").empty()) << v.id;
    ASSERT_NE(v.embedded, nullptr) << v.id;
#if defined(EVK_HAVE_CUDA)
    EXPECT_GT(v.embedded->fatbin_size, 0u) << v.id << ": no embedded fatbin";
#endif
  }
  EXPECT_EQ(ids, files);
  // each shipped genome has its account of the kept edits (issue 10) in kernels/evolved/README.md
  std::ifstream in(dir.parent_path() / "README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& f : files)
    EXPECT_NE(readme.find("`" + f + ".genome`"), std::string::npos)
        << f << ".genome has no section in " << (dir.parent_path() / "README.md").string();
}

#if defined(EVK_HAVE_CUDA)
// request(v): the NVRTC request the tool's GPU path makes for v on its default job.
inline void expect_every_variant_compiles_and_finds_its_fatbin(const Registry& reg,
                                                              const std::function<NvrtcRequest(const Variant&)>& request) {
  for (const auto& v : builtin_variants(reg)) {
    NvrtcRequest req = request(v);
    req.cc = v.cc;
    const NvrtcResult r = nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << v.id << ": " << r.log;
    EXPECT_EQ(find_embedded_variant(req.source, req.options), v.embedded) << v.id;
  }
}
#endif

}  // namespace evk::testing

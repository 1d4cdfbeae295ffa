// NVRTC works without a GPU: compile checks run in CI.
#include <fstream>
#include <sstream>

#include "evk/cuda_library.hpp"
#include "evk_testing.hpp"

#if defined(EVK_HAVE_CUDA)
static std::string smoke_source() {
  std::ifstream in(std::string(EVK_TEST_SOURCE_DIR) + "/smoke_kernel.cu");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Nvrtc, CompilesToCubin) {
  evk::NvrtcRequest req;
  req.source = smoke_source();
  ASSERT_FALSE(req.source.empty());
  req.options = {"-DOFFSET=1.0f"};
  auto r = evk::nvrtc_compile(req);
  ASSERT_TRUE(r.ok) << r.log;
  ASSERT_GT(r.cubin.size(), 4u);
  EXPECT_EQ(std::string(r.cubin.data() + 1, 3), "ELF");
  EXPECT_FALSE(evk::nvrtc_version().empty());
}

TEST(Nvrtc, ErrorsAreReportedWithLog) {
  evk::NvrtcRequest req;
  req.source = "extern \"C\" __global__ void k(int* p) { p[0] = undeclared_thing; }";
  req.want_cubin = false;
  auto r = evk::nvrtc_compile(req);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("undeclared_thing"), std::string::npos) << r.log;
}

// Reading a variable before setting it is undefined behaviour: refused with the reason, not cached.
TEST(Nvrtc, UseBeforeSetIsRefusedAndNotCached) {
  evk::NvrtcRequest req;
  req.source = "extern \"C\" __global__ void k(int* p, int n) { int i; for (; i < n; ++i) p[i] = i; }";
  auto r = evk::nvrtc_compile(req);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.log.rfind("refused: undefined behaviour", 0), 0u) << r.log;
  EXPECT_NE(r.log.find("\"i\" is used before its value is set"), std::string::npos) << r.log;
  evk::testing::TempDir d;
  evk::CompileCache cache(d.path());
  EXPECT_FALSE(cache.compile(req).ok);
  EXPECT_FALSE(cache.compile(req).ok);  // the second time too: nothing was cached
  // the same kernel with the variable set compiles
  req.source = "extern \"C\" __global__ void k(int* p, int n) { int i = 0; for (; i < n; ++i) p[i] = i; }";
  r = evk::nvrtc_compile(req);
  EXPECT_TRUE(r.ok) << r.log;
}

TEST(Nvrtc, CacheKeyDependsOnSourceOptionsAndArch) {
  evk::NvrtcRequest a;
  a.source = "x";
  auto b = a, c = a, d = a;
  b.source = "y";
  c.options = {"-DX=1"};
  d.cc = 80;
  auto k = evk::CompileCache::key(a);
  EXPECT_EQ(k, evk::CompileCache::key(a));
  EXPECT_NE(k, evk::CompileCache::key(b));
  EXPECT_NE(k, evk::CompileCache::key(c));
  EXPECT_NE(k, evk::CompileCache::key(d));
}

TEST(Nvrtc, CacheStoresAndReturnsCubins) {
  evk::testing::TempDir d;
  evk::CompileCache cache(d.path());
  evk::NvrtcRequest req;
  req.source = smoke_source();
  auto first = cache.compile(req);
  ASSERT_TRUE(first.ok) << first.log;
  auto second = cache.compile(req);
  ASSERT_TRUE(second.ok);
  EXPECT_EQ(second.log, "(cached)");
  EXPECT_EQ(first.cubin, second.cubin);
}
#else
TEST(Nvrtc, NeedsCuda) { GTEST_SKIP() << "built without CUDA"; }
#endif

// barracuda_exact's two GI seeds and reads before writes. The exact kernel value-initialises its
// query buffer (qbuf, direct_sequence off) and its BWT block cache; the inexact kernel its read (seq),
// the hits found so far, the occurrence counts, the stack (gstack) and every entry it packs or unpacks.
// A candidate that skips a fill reads zeros, not undefined values that may pass the check by luck
// (NVRTC's #549 refusal covers no array or struct). Not initialised, for cost: the inexact kernel's
// per-read width arrays ww, sw, wb, sb (5 KB of local stores per read; docs/GI.md). GPU side:
// BarracudaGpu.UnloadedQueryBufferIsPenalised, BarracudaGpu.ReadingTheUnloadedCacheIsPenalised,
// BarracudaInexactGpu.UnfilledReadAndCountsArePenalised (barracuda_exact_gpu_tests).
#include <gtest/gtest.h>

#include "gi/aln_gi_problem.hpp"
#include "gi/gi_problem.hpp"
#include "seed_arrays.hpp"

namespace bc = evk::barracuda_exact;
using evk::testing::expect_value_initialised;

namespace {
std::string zero(const std::string& name) { return "memset(&" + name + ", 0, sizeof(" + name + "));"; }
}  // namespace

TEST(BarracudaSeedArrays, ExactKernelInitialisesQueryBufferAndCache) {
  expect_value_initialised(bc::make_gi_problem()->kernel_source(), "barracuda_exact.cu",
                           {{"u32", "qbuf"}, {"bwt_cache", "cache"}});
}

TEST(BarracudaSeedArrays, InexactKernelInitialisesItsArraysStackAndEntries) {
  const std::string src = bc::make_inexact_gi_problem()->kernel_source();
  expect_value_initialised(src, "inexact.cu",
                           {{"u8", "seq"}, {"u64", "found_k"}, {"u64", "found_l"}, {"u64", "cnt_k"}, {"u64", "cnt_l"},
                            {"gstack", "s"}, {"entry", "tmp"}, {"uint4", "v"}});
  // every `entry e` (st_push, st_release_above, search_read)
  expect_value_initialised(src, "inexact.cu", {{"entry", "e"}}, 3);
}

#if defined(EVK_HAVE_CUDA)
using evk::testing::expect_reads_zeros;

TEST(BarracudaSeedArrays, UnloadedQueryBufferReadsZeros) {
  auto p = bc::make_gi_problem();
  expect_reads_zeros(*p, "direct_sequence=false " + evk::testing::seed_delete(*p, "qbuf[w] = seq_load(seqs, seqs_tex, base + w * 32);"),
                     "u32 qbuf[MAX_READ_WORDS]", zero("qbuf"));
}

// The occurrence counts (cnt_k, cnt_l) are value-initialised too, but with them zeroed once more the
// optimiser lays the stack frame out differently, so that candidate is not compared here.
TEST(BarracudaSeedArrays, InexactUnfilledArraysAndEntriesReadZeros) {
  auto p = bc::make_inexact_gi_problem();
  const std::string read = "__device__ u32 search_read(";
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "seq[j] = static_cast<u8>(c > 3 ? 4 : 3 - c);"), "u8 seq[MAX_LEN]", zero("seq"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "found_k[n_aln] = k;"), "u64 found_k[ALN_CAP]", zero("found_k") + " " + zero("found_l"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "st_pop(s, e);"), "entry e", zero("e"), read);
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "e.k = k;"), "entry e", zero("e"), "__device__ void st_push(");
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "v.x = static_cast<u32>(e.k);"), "uint4 v", zero("v"));
  expect_reads_zeros(*p, evk::testing::seed_delete(*p, "s.free_head = NIL;"), "gstack s", "s = gstack{};");
}
#endif

// core/sa_lookup.cu compiled as host code (CUDA qualifiers defined away, __popc as the builtin) and
// run thread by thread: its occurrence counts and text positions equal BwtIndex::occ_at / sa_at, so
// the GPU kernel's logic is checked on every machine; the GPU suite checks the real kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "core/index.hpp"
#include "core/match.hpp"
#include "pipeline_inputs.hpp"
#include "test_util.hpp"

namespace kernel_on_host {
struct Dim3 {
  unsigned x = 0;
};
Dim3 blockIdx, threadIdx, blockDim;
inline unsigned __popc(unsigned x) { return static_cast<unsigned>(__builtin_popcount(x)); }
#define __device__
#define __forceinline__ inline
#define __global__
#define __restrict__
#include "core/sa_lookup.cu"
#undef __device__
#undef __forceinline__
#undef __global__
#undef __restrict__
}  // namespace kernel_on_host

namespace bc = evk::barracuda_exact;
namespace k = kernel_on_host;

TEST(BarracudaSaLookup, KernelLogicEqualsTheCpuLookup) {
  const auto ref = bct::tricky_reference(91);
  const bc::BwtIndex idx = bc::build_index(ref);
  const std::string fwd = bct::forward_text(idx);
  k::SaConsts s{};
  s.primary = idx.primary;
  s.seq_len = idx.seq_len;
  for (int i = 0; i < 5; ++i) s.L2[i] = idx.L2[i];
  s.sa_intv = idx.sa_intv;
  std::mt19937_64 rng(3);
  for (int t = 0; t < 20000; ++t) {  // occurrence counts, the row before 0 and the last row included
    const std::uint64_t row = t == 0 ? ~0ull : t == 1 ? idx.seq_len : rng() % idx.seq_len;
    const int c = static_cast<int>(rng() & 3);
    ASSERT_EQ(k::occ_at(idx.occ.data(), s, row, c), idx.occ_at(row, c)) << "row " << row << " base " << c;
  }
  // reads: unique, 4 and 7 copies, no hit, an N
  std::vector<std::uint64_t> kl;
  for (int i = 0; i < 3000; ++i) {
    std::string r = i % 4 == 0 ? fwd.substr(1000 + rng() % 60, 30 + rng() % 60)
                    : i % 4 == 1 ? fwd.substr(12000 + rng() % 40, 20 + rng() % 70)
                    : i % 4 == 2 ? fwd.substr(rng() % (fwd.size() - 100), 100)
                                 : bct::random_dna(rng, 40);
    if (i % 50 == 7) r[r.size() / 2] = 'N';
    bc::ReadCodes rc;
    rc.add(r.data(), r.size());
    const bc::KL x = bc::match_exact(idx, rc.codes.data(), rc.len[0]);
    kl.push_back(x.k);
    kl.push_back(x.l);
  }
  const unsigned n = static_cast<unsigned>(kl.size() / 2);
  std::vector<std::uint64_t> out(4 * n, 0x5A5A5A5A5A5A5A5Aull);
  k::blockDim.x = 128;
  for (unsigned t = 0; t < 4 * n + 100; ++t) {  // every thread of the grid, past the end too
    k::blockIdx.x = t / 128;
    k::threadIdx.x = t % 128;
    k::sa_lookup(idx.occ.data(), s, reinterpret_cast<const unsigned long long*>(idx.sa.data()),
                 reinterpret_cast<const unsigned long long*>(kl.data()), n, reinterpret_cast<unsigned long long*>(out.data()));
  }
  int checked[3] = {0, 0, 0};
  for (unsigned i = 0; i < n; ++i) {
    const bc::KL x{kl[2 * i], kl[2 * i + 1]};
    const std::uint64_t rows = !x.hit() ? 0 : x.count() <= 4 ? x.count() : 1;
    for (std::uint64_t j = 0; j < 4; ++j) {
      if (j < rows)
        ASSERT_EQ(out[4 * i + j], idx.sa_at(x.k + j)) << "read " << i << " row " << j;
      else
        ASSERT_EQ(out[4 * i + j], ~0ull) << "read " << i << ": slot " << j << " not marked empty";  // every slot written
    }
    ++checked[!x.hit() ? 0 : x.count() <= 4 ? 1 : 2];
  }
  EXPECT_GT(checked[0], 100);
  EXPECT_GT(checked[1], 1000);
  EXPECT_GT(checked[2], 500);
}

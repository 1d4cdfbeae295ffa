// The later passes' warp-per-read search (apps/barracuda_exact/core/aln_warp.cuh) compiled for the
// host: the 32 lanes of each phase run one after another (its WLANES/WLANE0 host forms), CUDA's
// built-ins as plain C++ (inexact_host_shim.hpp), so that the order of its replay is checked against
// the CPU search without a GPU. Two builds: lanes writing the kernel's WARP_STEPS records ahead, and 1.
#include <algorithm>
#include <memory>

#include "core/aln_kernel.hpp"
#include "inexact_host.hpp"

#define WARP_HOST_RUN                                                                                                    \
  bct::KernelOutput run(const evk::barracuda_exact::BwtIndex& idx, const evk::barracuda_exact::ReadCodes& reads,       \
                        const evk::barracuda_exact::AlnOptions& opt, std::uint64_t stack_cap, int aln_cap) {           \
    namespace bc = evk::barracuda_exact;                                                                               \
    bc::PackedReads pk;                                                                                                \
    bc::pack_reads(reads, pk);                                                                                         \
    std::uint32_t max_len = 0;                                                                                         \
    for (auto l : reads.len) max_len = std::max(max_len, l);                                                           \
    const bc::AlnKernelParams hp = bc::aln_kernel_params(opt, static_cast<int>(max_len));                              \
    const wparams p{hp.s_mm,          hp.s_gapo,      hp.s_gape,    hp.max_gapo,      hp.max_gape,                     \
                    hp.gape_counts,   hp.indel_end_skip, hp.max_del_occ, hp.max_entries, hp.seed_len,                  \
                    hp.max_seed_diff, hp.max_top2,    hp.log_gap,   hp.non_stop};                                      \
    wbwt b{};                                                                                                          \
    b.primary = idx.primary;                                                                                           \
    b.seq_len = idx.seq_len;                                                                                           \
    for (int i = 0; i < 5; ++i) b.L2[i] = idx.L2[i];                                                                   \
    const std::vector<int> md = bc::aln_max_diff_table(opt, WMAX_LEN);                                                 \
    std::vector<wu32> bwt(idx.occ.begin(), idx.occ.end());                                                             \
    bwt.resize(bwt.size() + 16, 0);                                                                                    \
    std::vector<uint4> mem(w_warp_u4(stack_cap));                                                                      \
    auto w = std::make_unique<wstate>();                                                                               \
    const wmem m = w_mem(mem.data(), stack_cap);                                                                       \
    bct::KernelOutput o;                                                                                               \
    o.aln_cap = aln_cap;                                                                                               \
    o.n_out.assign(reads.size(), 0xdeadbeefu); /* poisoned */                                                          \
    o.aln_out.assign(reads.size() * static_cast<std::size_t>(aln_cap) * 3, 0xa5a5a5a5a5a5a5a5ull);                      \
    for (wu32 r = 0; r < static_cast<wu32>(reads.size()); ++r) {                                                       \
      w_search(*w, m, bwt.data(), b, p, md.data(), pk.words.data(), pk.len.data(), pk.stride, r, stack_cap,            \
               reinterpret_cast<wu64*>(o.aln_out.data()) + static_cast<std::size_t>(r) * aln_cap * 3, aln_cap);       \
      o.n_out[r] = w->result;                                                                                          \
    }                                                                                                                  \
    return o;                                                                                                          \
  }

namespace warp_steps_kernel {
#include "inexact_host_shim.hpp"
#include "core/aln_warp.cuh"
WARP_HOST_RUN
}  // namespace warp_steps_kernel

#undef WARP_STEPS
#define WARP_STEPS 1
namespace warp_steps1 {
#include "inexact_host_shim.hpp"
#include "core/aln_warp.cuh"
WARP_HOST_RUN
}  // namespace warp_steps1

namespace bct {
KernelOutput run_warp_kernel_on_host(const evk::barracuda_exact::BwtIndex& idx, const evk::barracuda_exact::ReadCodes& reads,
                                     const evk::barracuda_exact::AlnOptions& opt, std::uint64_t stack_cap, int aln_cap,
                                     int steps) {
  return steps == 1 ? warp_steps1::run(idx, reads, opt, stack_cap, aln_cap) : warp_steps_kernel::run(idx, reads, opt, stack_cap, aln_cap);
}
}  // namespace bct

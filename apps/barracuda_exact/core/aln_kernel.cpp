#include "core/aln_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "evk/parallel.hpp"

namespace evk::barracuda_exact {

AlnKernelParams aln_kernel_params(const AlnOptions& opt, int max_len) {
  AlnKernelParams p{};
  p.s_mm = opt.s_mm;
  p.s_gapo = opt.s_gapo;
  p.s_gape = opt.s_gape;
  p.max_gapo = std::min(opt.max_gapo, aln_max_diff(opt, max_len));
  p.max_gape = opt.max_gape;
  p.gape_counts = opt.gape_counts;
  p.indel_end_skip = opt.indel_end_skip;
  p.max_del_occ = opt.max_del_occ;
  p.max_entries = opt.max_entries;
  p.seed_len = opt.seed_len;
  p.max_seed_diff = opt.max_seed_diff;
  p.max_top2 = opt.max_top2;
  p.log_gap = opt.log_gap;
  p.non_stop = opt.non_stop;
  return p;
}

std::vector<int> aln_max_diff_table(const AlnOptions& opt, int max_len) {
  std::vector<int> t(static_cast<std::size_t>(max_len) + 1);
  for (int l = 0; l <= max_len; ++l) t[static_cast<std::size_t>(l)] = aln_max_diff(opt, l);
  return t;
}

bool aln_kernel_supports(const AlnOptions& opt, const BwtIndex& idx, int max_len) {
  int md = 0;
  for (int l = 0; l <= max_len; ++l) md = std::max(md, aln_max_diff(opt, l));
  return idx.seq_len < (1ull << 36) && opt.max_gapo <= 15 && opt.max_gape <= 63 && md <= 63 &&
         opt.max_gapo + opt.max_gape <= 63 && opt.max_entries >= 0;
}

Aln decode_kernel_aln(const std::uint64_t* w) {
  Aln a;
  a.k = w[0];
  a.l = w[1];
  a.n_mm = static_cast<std::uint32_t>(w[2] & 0xff);
  a.n_gapo = static_cast<std::uint32_t>(w[2] >> 8 & 0xff);
  a.n_gape = static_cast<std::uint32_t>(w[2] >> 16 & 0xff);
  a.n_ins = static_cast<std::uint32_t>(w[2] >> 24 & 0x3ff);
  a.n_del = static_cast<std::uint32_t>(w[2] >> 34 & 0x3ff);
  a.score = static_cast<int>(w[2] >> 44 & 0xfffff);
  return a;
}

std::size_t merge_kernel_output(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt,
                                const std::vector<std::uint32_t>& n_out, const std::vector<std::uint64_t>& aln_out,
                                int aln_cap, int threads, AlnBatch& out) {
  const std::size_t n = reads.size();
  std::vector<std::size_t> back;
  for (std::size_t i = 0; i < n; ++i)
    if (n_out[i] == kHandedBack) back.push_back(i);
  // the handed-back reads on the CPU, with the batch's gap-open limit (as the kernel had it)
  std::uint32_t max_len = 0;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  const int batch_gapo = std::min(opt.max_gapo, aln_max_diff(opt, static_cast<int>(max_len)));
  std::vector<std::vector<Aln>> cpu(back.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    AlnSearcher s(idx, opt);
    s.set_batch_max_gapo(batch_gapo);
    for (std::size_t j; (j = next.fetch_add(1)) < back.size();) {
      const std::size_t i = back[j];
      s.search(reads.codes.data() + reads.offset[i], reads.len[i], cpu[j]);
    }
  };
  const std::size_t t = std::min<std::size_t>(static_cast<std::size_t>(threads > 0 ? threads : default_threads()), back.size());
  if (t <= 1) {
    if (!back.empty()) work();
  } else {
    std::exception_ptr err;
    std::mutex mu;
    std::vector<std::thread> pool;
    for (std::size_t k = 0; k < t; ++k)
      pool.emplace_back([&] {
        try {
          work();
        } catch (...) {
          std::lock_guard<std::mutex> g(mu);
          if (!err) err = std::current_exception();
        }
      });
    for (auto& th : pool) th.join();
    if (err) std::rethrow_exception(err);
  }
  out.clear();
  out.offset.reserve(n + 1);
  for (std::size_t i = 0, j = 0; i < n; ++i) {
    if (n_out[i] == kHandedBack) {
      out.alns.insert(out.alns.end(), cpu[j].begin(), cpu[j].end());
      ++j;
    } else {
      const std::uint64_t* w = aln_out.data() + i * static_cast<std::size_t>(aln_cap) * 3;
      for (std::uint32_t a = 0; a < n_out[i]; ++a) out.alns.push_back(decode_kernel_aln(w + 3 * a));
    }
    out.offset.push_back(static_cast<std::uint32_t>(out.alns.size()));
  }
  return back.size();
}

}  // namespace evk::barracuda_exact

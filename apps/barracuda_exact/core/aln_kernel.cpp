#include "core/aln_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
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

std::vector<std::uint64_t> compact_kernel_output(std::span<const std::uint32_t> n_out,
                                                 std::span<const std::uint64_t> aln_out, int aln_cap) {
  const std::size_t slot = static_cast<std::size_t>(aln_cap) * 3;
  if (aln_out.size() < n_out.size() * slot) throw std::invalid_argument("compact_kernel_output: aln_out too short");
  std::vector<std::uint64_t> packed;
  for (std::size_t i = 0; i < n_out.size(); ++i) {
    const std::uint64_t* w = aln_out.data() + i * slot;
    packed.insert(packed.end(), w, w + 3 * static_cast<std::size_t>(kernel_entries(n_out[i], aln_cap)));
  }
  return packed;
}

std::size_t merge_kernel_output(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt,
                                const std::vector<std::uint32_t>& n_out, const std::vector<std::uint64_t>& aln_out,
                                int aln_cap, int threads, AlnBatch& out) {
  const std::vector<std::uint64_t> packed = compact_kernel_output(n_out, aln_out, aln_cap);
  return merge_kernel_output_packed(idx, reads, opt, n_out, packed, aln_cap, threads, out);
}

std::vector<std::uint32_t> handed_back_reads(std::span<const std::uint32_t> n_out, int aln_cap) {
  std::vector<std::uint32_t> back;
  for (std::size_t i = 0; i < n_out.size(); ++i) {
    if (n_out[i] == kHandedBack)
      back.push_back(static_cast<std::uint32_t>(i));
    else if (n_out[i] > static_cast<std::uint32_t>(aln_cap))
      throw std::runtime_error("inexact kernel: read " + std::to_string(i) + " not answered (" + std::to_string(n_out[i]) + ")");
  }
  return back;
}

ReadCodes gather_reads(const ReadCodes& reads, std::span<const std::uint32_t> ids) {
  ReadCodes out;
  std::size_t total = 0;
  for (const std::uint32_t i : ids) total += reads.len.at(i);
  out.codes.reserve(total);
  out.offset.reserve(ids.size());
  out.len.reserve(ids.size());
  for (const std::uint32_t i : ids) {
    out.offset.push_back(out.codes.size());
    out.len.push_back(reads.len[i]);
    const std::uint8_t* c = reads.codes.data() + reads.offset[i];
    out.codes.insert(out.codes.end(), c, c + reads.len[i]);
  }
  return out;
}

void splice_pass_output(std::vector<std::uint32_t>& n_out, std::vector<std::uint64_t>& packed,
                        std::span<const std::uint32_t> reads, std::span<const std::uint32_t> pass_n_out,
                        std::span<const std::uint64_t> pass_packed, int pass_aln_cap) {
  if (pass_n_out.size() != reads.size()) throw std::invalid_argument("splice_pass_output: one pass_n_out per read expected");
  std::size_t pass_entries = 0;
  for (std::size_t j = 0; j < reads.size(); ++j) {
    if (reads[j] >= n_out.size() || n_out[reads[j]] != kHandedBack || (j > 0 && reads[j] <= reads[j - 1]))
      throw std::runtime_error("later pass: read " + std::to_string(reads[j]) + " was not handed back (or out of order)");
    if (pass_n_out[j] == kHandedBack) continue;
    if (pass_n_out[j] > static_cast<std::uint32_t>(pass_aln_cap))
      throw std::runtime_error("later pass: read " + std::to_string(reads[j]) + " not answered (" + std::to_string(pass_n_out[j]) + ")");
    pass_entries += pass_n_out[j];
  }
  std::size_t entries = 0;
  for (const std::uint32_t c : n_out) entries += c == kHandedBack ? 0 : c;
  if (packed.size() != 3 * entries || pass_packed.size() != 3 * pass_entries)
    throw std::runtime_error("later pass: packed words do not match the entry counts");
  std::vector<std::uint64_t> out;
  out.reserve(packed.size() + pass_packed.size());
  const std::uint64_t *w = packed.data(), *pw = pass_packed.data();
  for (std::size_t i = 0, j = 0; i < n_out.size(); ++i) {
    if (j < reads.size() && reads[j] == i) {  // handed back so far: the pass's answer, if any
      const std::uint32_t c = pass_n_out[j++];
      if (c == kHandedBack) continue;
      out.insert(out.end(), pw, pw + 3 * static_cast<std::size_t>(c));
      pw += 3 * static_cast<std::size_t>(c);
      n_out[i] = c;
    } else if (n_out[i] != kHandedBack) {
      out.insert(out.end(), w, w + 3 * static_cast<std::size_t>(n_out[i]));
      w += 3 * static_cast<std::size_t>(n_out[i]);
    }
  }
  packed.swap(out);
}

std::size_t merge_kernel_output_packed(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt,
                                       std::span<const std::uint32_t> n_out, std::span<const std::uint64_t> packed,
                                       int aln_cap, int threads, AlnBatch& out) {
  const std::size_t n = reads.size();
  if (n_out.size() != n) throw std::invalid_argument("merge_kernel_output: one n_out per read expected");
  const std::vector<std::uint32_t> back = handed_back_reads(n_out, aln_cap);
  std::size_t entries = 0;
  for (const std::uint32_t c : n_out) entries += c == kHandedBack ? 0 : c;
  if (packed.size() != 3 * entries)
    throw std::runtime_error("inexact kernel: " + std::to_string(packed.size()) + " packed words for " +
                             std::to_string(entries) + " entries");
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
  std::size_t total = entries;
  for (const auto& c : cpu) total += c.size();
  out.alns.reserve(total);
  const std::uint64_t* w = packed.data();  // the next answered read's entries
  for (std::size_t i = 0, j = 0; i < n; ++i) {
    if (n_out[i] == kHandedBack) {
      out.alns.insert(out.alns.end(), cpu[j].begin(), cpu[j].end());
      ++j;
    } else {
      for (std::uint32_t a = 0; a < n_out[i]; ++a) out.alns.push_back(decode_kernel_aln(w + 3 * a));
      w += 3 * static_cast<std::size_t>(n_out[i]);
    }
    out.offset.push_back(static_cast<std::uint32_t>(out.alns.size()));
  }
  return back.size();
}

}  // namespace evk::barracuda_exact

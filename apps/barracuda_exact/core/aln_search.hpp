// bwa aln's inexact search on the CPU: bounded backtracking over the FM-index with a priority
// stack (bucketed by score, last in first out within a bucket), mismatches, one gap open with
// extensions, the seed and width (lower bound) pruning, the "top2" stopping rules, both strands at
// once (the BWT holds the reverse complement too). The same hits in the same order as `bwa aln`
// (bwt_match_gap in bwtgap.c, whose algorithm this follows; our own code).
#pragma once
#include <cstdint>
#include <vector>

#include "core/aln_options.hpp"
#include "core/index.hpp"
#include "core/match.hpp"

namespace evk::barracuda_exact {

// One hit interval of a read (bwa's bwt_aln1_t): its SA interval and its differences.
struct Aln {
  std::uint32_t n_mm = 0, n_gapo = 0, n_gape = 0, n_ins = 0, n_del = 0;
  int score = 0;
  std::uint64_t k = 0, l = 0;
  bool operator==(const Aln&) const = default;
};

// The hits of a batch of reads, in search order, read i's at [offset[i], offset[i+1]).
struct AlnBatch {
  std::vector<Aln> alns;
  std::vector<std::uint32_t> offset{0};
  std::size_t size() const { return offset.size() - 1; }
  const Aln* begin(std::size_t i) const { return alns.data() + offset[i]; }
  std::uint32_t count(std::size_t i) const { return offset[i + 1] - offset[i]; }
  void clear() {
    alns.clear();
    offset.assign(1, 0);
  }
};

// Statistics of one search (for tests and the GPU's capacity choice).
struct AlnSearchStats {
  std::uint64_t max_entries = 0;  // largest stack size
  std::uint64_t pops = 0;
  bool stopped_by_queue_limit = false;
  // The GPU kernel's bookkeeping for the same search (kernels/original/barracuda_exact/inexact.cu):
  // after the first hit it does not store entries scoring above best + s_mm and releases those it
  // holds. Its peak of stored entries and their highest score decide whether it hands the read back.
  std::uint64_t kernel_peak_stored = 0;
  int kernel_max_stored_score = 0;
  std::uint32_t n_aln = 0;
};

// Whether the kernel with these limits answers the read (else it hands it back to the CPU).
inline bool kernel_answers(const AlnSearchStats& s, std::uint32_t len, int max_len, int stack_cap, int aln_cap,
                           int max_buckets = 128) {
  return len <= static_cast<std::uint32_t>(max_len) && s.kernel_peak_stored <= static_cast<std::uint64_t>(stack_cap) &&
         s.n_aln <= static_cast<std::uint32_t>(aln_cap) && s.kernel_max_stored_score < max_buckets;
}

// Per-thread scratch space of the search (the priority stack and the width arrays).
class AlnSearcher {
 public:
  AlnSearcher(const BwtIndex& idx, const AlnOptions& opt);
  // codes: the read (0..3 = ACGT, 4 = other), already trimmed; appends its hits to out.
  void search(const std::uint8_t* codes, std::uint32_t len, std::vector<Aln>& out, AlnSearchStats* stats = nullptr);
  // bwa limits the gap opens once per batch, by the maximum differences of the batch's longest
  // read (it matters only with -o above that); -1: by this read's own length.
  void set_batch_max_gapo(int max_gapo) { batch_max_gapo_ = max_gapo; }

 private:
  struct Width {
    std::uint64_t w = 0;
    int bid = 0;
  };
  struct Entry {
    int score = 0, i = 0;
    std::uint32_t n_mm = 0, n_gapo = 0, n_gape = 0, state = 0, n_ins = 0, n_del = 0;
    int last_diff_pos = 0;
    std::uint64_t k = 0, l = 0;
  };
  // One read's search: its complemented reversed codes, widths and limits, and the best hits so far.
  struct Read {
    const std::uint8_t* seq = nullptr;
    Width* width = nullptr;
    const Width* seed_w = nullptr;
    int len = 0;
    std::int64_t seed_len = 0;
    bool use_seed = false, gape = false;
    int max_gapo = 0, opt_max_diff = 0, max_diff = 0, best_score = 0;
    std::uint64_t best_cnt = 0;
    std::size_t first = 0;  // the read's first hit in out
  };
  void cal_width(const std::uint8_t* str, int len, Width* w) const;
  // bwt_match_exact_alt: the rest of the read, seq[0, i), matched exactly from (k, l); false: no match.
  bool match_rest(const std::uint8_t* seq, int i, std::uint64_t& k, std::uint64_t& l) const;
  // A hit of entry e at (k, l) into out (bwa's top2 limits, the widths shadowed); false: stop (top2b).
  bool take_hit(const Entry& e, std::uint64_t k, std::uint64_t l, Read& r, std::vector<Aln>& out);
  // The entries that extend e by one base: indels, then mismatches or the exact base.
  void expand(const Entry& e, int m, int m_seed, const Read& r);
  void push(int i, std::uint64_t k, std::uint64_t l, std::uint32_t n_mm, std::uint32_t n_gapo, std::uint32_t n_gape,
            std::uint32_t n_ins, std::uint32_t n_del, std::uint32_t state, bool is_diff);
  Entry pop();
  int score_of(int mm, int gapo, int gape) const { return mm * opt_.s_mm + gapo * opt_.s_gapo + gape * opt_.s_gape; }

  const BwtIndex& idx_;
  AlnOptions opt_;
  std::vector<std::vector<Entry>> buckets_;
  int best_ = 0;
  std::size_t n_entries_ = 0;
  std::vector<Width> width_, seed_width_;
  std::vector<std::uint8_t> rev_, seq_;
  int batch_max_gapo_ = -1;
  // the kernel's bookkeeping (see AlnSearchStats)
  std::vector<std::uint64_t> stored_by_score_;
  std::uint64_t stored_ = 0, peak_stored_ = 0;
  int dead_above_ = 0, max_stored_score_ = 0;
};

// The search over a batch, multi-threaded (threads <= 0: all cores); reads as base codes after
// trimming (trim with trim_len before packing). Thread-safe; results independent of threads.
AlnBatch aln_search_batch(const BwtIndex& idx, const ReadCodes& reads, const AlnOptions& opt, int threads = 0);

// bwa's occurrence counts of the four bases in BWT rows [0, k] (bwt_occ4; k == ~0 gives zeros).
void occ4(const BwtIndex& idx, std::uint64_t k, std::uint64_t cnt[4]);

}  // namespace evk::barracuda_exact

// From an SA interval to reference coordinates, as bwa samse does it: the text position of a row
// through the sampled SA, strand from the half of the forward + reverse-complement text, contig by
// binary search over .ann, hits that run past their contig's end flagged (bwa marks them unmapped).
#pragma once
#include <cstdint>
#include <vector>

#include "core/index.hpp"
#include "core/match.hpp"

namespace evk::barracuda_exact {

struct Place {
  std::int64_t pos = 0;  // 0-based forward-strand position in the concatenated reference
  bool reverse = false;
  int tid = 0;           // contig
  bool operator==(const Place&) const = default;
};

struct Hit {
  std::uint64_t count = 0;    // occurrences (X0); 0 = no exact hit
  Place primary;
  bool bridging = false;      // runs past the end of its contig (bwa: FLAG 4, fields kept): no hit
  bool mapped() const { return count > 0 && !bridging; }
  int n_ambiguous = 0;        // reference ambiguous bases under the hit (bwa's XN; XT:A:N when > 10)
  std::vector<Place> alts;    // XA: the other occurrences when count <= kMaxXa + 1
};

constexpr int kMaxXa = 3;  // bwa samse -n default

// The reference position and strand of SA row `row` for a read of length len (bwa_sa2pos).
Place row_place(const BwtIndex& idx, std::uint64_t row, std::uint32_t len);
// The same from the row's text position (idx.sa_at(row), e.g. computed on the GPU).
Place text_place(const BwtIndex& idx, std::uint64_t text_pos, std::uint32_t len);
// bwa's bns_pos2rid and bns_cnt_ambi (which counts only the first overlapping hole, as bwa does).
int contig_of(const BwtIndex& idx, std::int64_t pos);
int count_ambiguous(const BwtIndex& idx, std::int64_t pos, int len);

// The primary occurrence is row kl.k, or for a repeat whose row k runs past its contig's end the
// first of the next rows that does not (any row of the interval is correct; bwa picks one at random).
// sa_rows (optional): the text positions of rows k .. k + min(count, kSaRowsPerHit) - 1 when
// count <= kSaRowsPerHit, of row k alone beyond (the GPU backend's sa_lookup); other rows are
// looked up here.
constexpr int kSaRowsPerHit = kMaxXa + 1;
Hit resolve_hit(const BwtIndex& idx, const KL& kl, std::uint32_t len, const std::uint64_t* sa_rows = nullptr);
// Multi-threaded over a batch.
std::vector<Hit> resolve_hits(const BwtIndex& idx, const std::vector<KL>& kl, const std::vector<std::uint32_t>& len,
                              int threads = 0);

}  // namespace evk::barracuda_exact

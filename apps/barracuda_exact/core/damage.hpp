// The ancient-DNA damage profile of mapped reads, as mapDamage 2 tabulates it (its
// misincorporation.txt and lgdistribution.txt): per contig, read end (5' and 3', counted from the
// read's own ends, so a reverse-strand read is reverse-complemented first) and strand, for the first
// `length` alignment columns, the reference base composition and every substitution (C>T, G>A and
// the other ten), deletions (X>-), insertions (->X) and soft-clipped bases; and the aligned length
// per strand for unpaired reads. Columns where the read or the reference has another character than
// ACGT or a gap are skipped (they still advance the position). Our own code, after mapDamage's
// documented output and its rules (filters: unmapped, secondary, QC-failed, duplicate, supplementary).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evk::barracuda_exact {

struct DamageOptions {
  int length = 25;    // alignment columns counted from each end (mapDamage -l)
  int around = 10;    // reference bases before and after a read in the composition table (mapDamage -a)
  int min_mapq = 25;  // reads below are left out (mapDamage has none: 0 gives its counts)
};

// One alignment record, as much of it as the profile needs.
struct DamageRead {
  int contig = 0;                          // index into the profile's contigs
  std::int64_t pos = 0;                    // 0-based leftmost reference position
  std::uint16_t flag = 0;
  int mapq = 0;
  std::vector<std::pair<char, int>> cigar;  // operation (MIDNSHP=X) and length
  std::string seq;                          // SEQ as stored (soft clips included, forward strand)
};

// Reference bases an alignment covers (M, D, N, =, X).
std::int64_t reference_span(const DamageRead& r);

// The columns of a position: A C G T, then kDamageMutations in mapDamage's order.
constexpr int kDamageColumns = 4 + 21;
extern const std::array<const char*, 21> kDamageMutations;  // "G>A", "C>T", ..., "->G", "S"

class DamageProfile {
 public:
  DamageProfile(std::vector<std::string> contigs, DamageOptions opt);
  // Whether the filters keep a record (mapped, primary, not QC-failed, not a duplicate, MAPQ).
  bool wants(const DamageRead& r) const;
  // Adds a record: false when the filters leave it out. ref: its contig's sequence (any case).
  bool add(const DamageRead& r, std::string_view ref);
  // The same with only the reference around the record: win holds the contig's bases from
  // win_start, at least from r.pos - around (or 0) to its end + around (or the contig's end).
  bool add_window(const DamageRead& r, std::string_view win, std::int64_t win_start);
  void clear();  // no reads counted
  // Counts of contig c, end e (0: 5', 1: 3'), strand s (0: +, 1: -), position i, column k.
  std::uint64_t count(int c, int e, int s, int i, int k) const {
    const std::vector<std::uint64_t>& v = blocks_[static_cast<std::size_t>(c)].counts;
    return v.empty() ? 0 : v[count_at(e, s, i, k)];
  }
  // Base composition (mapDamage's dnacomp.txt) of contig c, end e, strand s, base b (A C G T), at
  // position pos: 5' end -around..-1 (the reference before the read) and 1..length (the read), 3'
  // end -length..-1 (the read) and 1..around (the reference after it); 0 elsewhere.
  std::uint64_t composition(int c, int e, int s, int pos, int b) const;
  const std::vector<std::string>& contigs() const { return contigs_; }
  const DamageOptions& options() const { return opt_; }
  const std::map<std::int64_t, std::uint64_t>& lengths(int strand) const { return lengths_[strand]; }
  std::uint64_t reads() const { return reads_; }
  void merge(const DamageProfile& o);  // the same contigs and options

 private:
  // A contig's tables, allocated when a read first lands on it (references with thousands of
  // contigs, and one profile per formatting part in `map --damage`).
  struct Block {
    std::vector<std::uint64_t> counts, comp;
  };
  std::size_t count_at(int e, int s, int i, int k) const {
    return ((static_cast<std::size_t>(e * 2 + s)) * static_cast<std::size_t>(opt_.length) + static_cast<std::size_t>(i)) *
               kDamageColumns + static_cast<std::size_t>(k);
  }
  std::size_t comp_at(int e, int s, int pos, int b) const;  // pos as composition(); -1 outside
  Block& block(int c);  // allocated on first use
  void count_end(int c, int e, int s, const std::uint8_t* q, const std::uint8_t* r, std::size_t len, bool backwards);
  void count_composition(const DamageRead& rd, int s, const std::uint8_t* q, std::size_t n, std::string_view win,
                         std::int64_t win_start, std::int64_t end);
  std::vector<std::string> contigs_;
  DamageOptions opt_;
  std::vector<Block> blocks_;
  std::vector<int> touched_;  // contigs with a Block, in first-use order
  std::array<std::map<std::int64_t, std::uint64_t>, 2> lengths_;
  std::uint64_t reads_ = 0;
};

}  // namespace evk::barracuda_exact

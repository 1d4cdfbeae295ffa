// Record-by-record agreement of our SAM with bwa's (same reads, same order): every field and tag
// compared, every differing record listed with the fields that differ and an explanation. The one
// accepted explanation is a tie: bwa reports a repeat (X0 > 1) and ours is another of the equally
// best hits (its position is bwa's primary or one of bwa's XA alternatives, or the read lies there
// in the reference). Used by the tests and by the bc_sam_agree tool (bench/barracuda_exact/agreement.sh).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace bct {

struct Agreement {
  std::size_t records = 0;
  std::size_t identical = 0;       // every field and tag
  std::size_t core_identical = 0;  // FLAG, RNAME, POS, CIGAR, MAPQ and the tags (XT NM XN SM AM X0 X1 XM XO XG MD XA XC RG)
  std::size_t ties = 0;            // differing records explained as another of the equally best hits
  std::size_t unexplained = 0;
  std::map<std::string, std::size_t> by_field;  // records differing in each field
  std::vector<std::string> listing;             // one line per differing record
  std::string error;                            // structural problem (counts or names differ)
  double identical_pct() const { return records ? 100.0 * static_cast<double>(identical) / static_cast<double>(records) : 0.0; }
  double core_pct() const { return records ? 100.0 * static_cast<double>(core_identical) / static_cast<double>(records) : 0.0; }
};

// ours, theirs: SAM text (header lines are ignored). ref: contig name -> sequence (upper case), for
// the tie check beyond XA (may be empty).
Agreement sam_agree(const std::string& ours, const std::string& theirs, const std::map<std::string, std::string>& ref = {});

// A markdown table row: | label | records | identical | core identical | ties | unexplained |
std::string agreement_row(const std::string& label, const Agreement& a);

}  // namespace bct

// One SAM record of the inexact pipeline, as bwa samse/sampe print it, without htslib: the I/O
// layer turns it into a BAM record (io/aln_sam.cpp) with the read's name, sequence and qualities.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace evk::barracuda_exact {

struct AlnRecord {
  std::uint16_t flag = 0;
  int tid = -1;              // contig index, -1 = '*'
  std::int64_t pos = -1;     // 0-based leftmost position, -1 = 0 in SAM
  int mapq = 0;
  std::vector<std::uint32_t> cigar;  // BAM encoding (len << 4 | op); empty = '*'
  int mtid = -1;             // mate's contig (paired; -1 = '*')
  std::int64_t mpos = -1;    // mate's 0-based position (-1 = 0 in SAM)
  std::int64_t isize = 0;
  bool reverse = false;      // SEQ and QUAL written reverse-complemented
  // tags, written in bwa's order: XC, XT, NM, XN, SM, AM, X0, X1, XM, XO, XG, MD, XA
  int xc = -1;               // clipped length (-q trimming), -1 = none
  bool aligned = false;      // the alignment tags below are present (bwa: type != no match)
  char xt = 'U';
  int nm = 0, xn = 0;        // XN only when > 0
  bool paired = false;       // SM and AM
  int sm = 0, am = 0;
  bool has_x0 = false, has_x1 = false;
  std::uint64_t x0 = 0, x1 = 0;
  int xm = 0, xo = 0, xg = 0;
  std::string md, xa;        // XA empty = none
};

}  // namespace evk::barracuda_exact

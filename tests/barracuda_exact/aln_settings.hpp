// Search settings the inexact tests share (header-only: the CPU and GPU test binaries both use it).
#pragma once
#include "core/aln_options.hpp"

namespace bct {

// bwa aln -l 1024 -n 0.01 -o 2: the ancient-DNA setting (no seed, few differences, two gap opens).
inline evk::barracuda_exact::AlnOptions adna_options() {
  evk::barracuda_exact::AlnOptions o;
  o.seed_len = 1024;
  o.fnr = 0.01f;
  o.max_gapo = 2;
  return o;
}

// -n 4 -o 2 -e 3 -l 20 -k 1 -M 4 -O 9 -E 3 -R 5 -i 3 -L: an integer maximum of differences, two
// gap opens, long gaps, a shorter seed, other penalties, fewer best hits, log-scaled gap penalties.
inline evk::barracuda_exact::AlnOptions varied_aln_options() {
  evk::barracuda_exact::AlnOptions o;
  o.max_diff = 4;
  o.fnr = -1.0f;
  o.max_gapo = 2;
  o.max_gape = 3;
  o.gape_counts = false;
  o.seed_len = 20;
  o.max_seed_diff = 1;
  o.s_mm = 4;
  o.s_gapo = 9;
  o.s_gape = 3;
  o.max_top2 = 5;
  o.indel_end_skip = 3;
  o.log_gap = true;
  return o;
}

}  // namespace bct

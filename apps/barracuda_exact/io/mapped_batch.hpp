// A batch's records as the writers (sam_writer.hpp) see them: the SAM/BAM record of each read, whether
// it goes to --unmatched, and the batch's counts. A mapper (map/mapper.hpp) gives one per batch.
#pragma once
#include <htslib/sam.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "io/read_batch.hpp"

namespace evk::barracuda_exact {

inline constexpr std::size_t kMapLaterPasses = 3;  // = kAlnMaxLaterPasses (core/aln_gpu.hpp, CUDA builds)

struct MapCounts {
  std::uint64_t reads = 0, unique = 0, repeat = 0, unmatched = 0, bridging = 0;
  // the inexact mapper: pairs, mapped reads with a gap, rescued by their mate, in proper pairs,
  // mapped by edit distance (NM 0..6, 7+), handed back by the GPU to the CPU search
  std::uint64_t pairs = 0, gapped = 0, mate_rescued = 0, proper_pairs = 0, handed_back = 0;
  // the GPU's first pass handed back (searched again by the later GPU passes, then handed_back on the CPU)
  std::uint64_t first_pass_back = 0;
  std::array<std::uint64_t, kMapLaterPasses> pass_reads{}, pass_answered{};  // each later GPU pass: in, answered
  std::uint64_t by_diff[8] = {};
  void add(const MapCounts& o) {
    reads += o.reads;
    unique += o.unique;
    repeat += o.repeat;
    unmatched += o.unmatched;
    bridging += o.bridging;
    pairs += o.pairs;
    gapped += o.gapped;
    mate_rescued += o.mate_rescued;
    proper_pairs += o.proper_pairs;
    handed_back += o.handed_back;
    first_pass_back += o.first_pass_back;
    for (std::size_t k = 0; k < kMapLaterPasses; ++k) {
      pass_reads[k] += o.pass_reads[k];
      pass_answered[k] += o.pass_answered[k];
    }
    for (int d = 0; d < 8; ++d) by_diff[d] += o.by_diff[d];
  }
};

// A mapper's results for one batch.
class MappedBatch {
 public:
  virtual ~MappedBatch() = default;
  // The SAM/BAM record of read i into `rec`; false when htslib refuses it (bam_set1 failed).
  virtual bool record(const ReadBatch& reads, std::size_t i, bam1_t* rec) const = 0;
  // Whether read i goes to --unmatched (FASTQ of the reads the mapper could not place).
  virtual bool unmatched(std::size_t i) const = 0;
  virtual MapCounts counts() const = 0;
};

}  // namespace evk::barracuda_exact

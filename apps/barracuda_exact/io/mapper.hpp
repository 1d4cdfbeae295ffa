// The mapping stage of `map` as an interface, so that the streaming driver (reading, batching,
// lanes, ordering, formatting, writing: map_run.cpp) serves any mapper: a batch of reads in, one
// SAM/BAM record per read out. The exact mapper (exact_mapper.hpp) is the first implementation; an
// inexact (bwa aln-class) mapper plugs in the same way.
//
// Threading contract: map() is called concurrently from lanes() threads, never twice at once for
// one lane (a lane may own a GPU stream); a lane may use the task pool for its parallel work.
// MappedBatch::record() is called concurrently for different reads of one batch.
#pragma once
#include <htslib/sam.h>

#include <cstdint>
#include <memory>
#include <string>

#include "io/read_batch.hpp"
#include "io/task_pool.hpp"

namespace evk::barracuda_exact {

struct MapCounts {
  std::uint64_t reads = 0, unique = 0, repeat = 0, unmatched = 0, bridging = 0;
  void add(const MapCounts& o) {
    reads += o.reads;
    unique += o.unique;
    repeat += o.repeat;
    unmatched += o.unmatched;
    bridging += o.bridging;
  }
};

// Seconds spent by one lane (summed over lanes by the driver).
struct MapTimes {
  double transfer = 0, kernel = 0, match = 0, lookup = 0;
  void add(const MapTimes& o) {
    transfer += o.transfer;
    kernel += o.kernel;
    match += o.match;
    lookup += o.lookup;
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

class Mapper {
 public:
  virtual ~Mapper() = default;
  virtual int lanes() const = 0;
  // Maps `reads` on lane `lane`. `out` may hold an earlier result of this mapper to reuse.
  virtual void map(int lane, const ReadBatch& reads, std::unique_ptr<MappedBatch>& out, TaskPool& pool,
                   MapTimes& times) = 0;
  virtual std::string describe() const = 0;  // e.g. "exact, GPU 0 (2 streams)"
};

}  // namespace evk::barracuda_exact

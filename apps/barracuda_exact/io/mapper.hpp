// The mapping stage of `map` as an interface, so that the streaming driver (reading, batching,
// lanes, ordering, formatting, writing: map_run.cpp) serves any mapper: a batch of reads in, one
// SAM/BAM record per read out. The exact mapper (exact_mapper.hpp) and the inexact single-end one
// (aln_mapper.hpp: bwa aln + samse, whose record step must see the batches in file order: finish())
// implement it. Paired-end inexact mapping still has its own driver (aln_run.hpp).
//
// Threading contract: map() is called concurrently from lanes() threads, never twice at once for
// one lane (a lane may own a GPU stream), on batches in any order; a lane may use the task pool for
// its parallel work. finish() is then called once per batch from one thread, in input order (for
// work that must see the batches in file order, such as bwa's random draws). MappedBatch::record()
// is called concurrently for different reads of one batch, after finish(). prepare() is called on
// each parsed batch before it is mapped (from the parse stage, in input order).
#pragma once
#include <htslib/sam.h>

#include <cstdint>
#include <memory>
#include <string>

#include "io/read_batch.hpp"
#include "evk/task_pool.hpp"

namespace evk::barracuda_exact {

struct MapCounts {
  std::uint64_t reads = 0, unique = 0, repeat = 0, unmatched = 0, bridging = 0;
  // the inexact mapper: pairs, mapped reads with a gap, rescued by their mate, in proper pairs,
  // mapped by edit distance (NM 0..6, 7+), handed back by the GPU to the CPU search
  std::uint64_t pairs = 0, gapped = 0, mate_rescued = 0, proper_pairs = 0, handed_back = 0;
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
    for (int d = 0; d < 8; ++d) by_diff[d] += o.by_diff[d];
  }
};

// Seconds spent by one lane (summed over lanes by the driver). match: the lane's search (exact
// matching, or the inexact search with its transfers and kernel and the CPU search of the reads the
// GPU handed back: fallback); lookup: the exact mapper's SA rows -> positions; records: finish() (the
// inexact mapper's samse: primary draws, SA rows -> positions, CIGAR/MD/NM, tags).
struct MapTimes {
  double transfer = 0, kernel = 0, match = 0, lookup = 0, fallback = 0, records = 0;
  void add(const MapTimes& o) {
    transfer += o.transfer;
    kernel += o.kernel;
    match += o.match;
    lookup += o.lookup;
    fallback += o.fallback;
    records += o.records;
  }
};

// What every record carries beyond its mapping: the read group of `-R` (RG:Z right after the core
// fields, where bwa writes it) and bwa aln's -R (X1 only for hits with X0 <= max_top2).
struct RecordOptions {
  std::string rg_id;  // empty: none
  int max_top2 = 30;
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
  // Once per batch after map(), in input order (see above); `out` is what map() gave.
  virtual void finish(MappedBatch& out, const ReadBatch& reads, TaskPool& pool, MapTimes& times) {
    (void)out, (void)reads, (void)pool, (void)times;
  }
  // After parsing, before map(): the mapper's changes to the reads (the inexact one drops empty reads).
  virtual void prepare(ReadBatch& reads) const { (void)reads; }
  virtual std::string describe() const = 0;  // e.g. "exact, GPU 0 (2 streams)"
  // GPU: where each device's kernel was loaded from ("embedded fatbin (ID)", "NVRTC ..."); else empty.
  virtual std::string kernel_origin() const { return {}; }
};

}  // namespace evk::barracuda_exact

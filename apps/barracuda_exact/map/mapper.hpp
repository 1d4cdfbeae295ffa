// The mapping stage of `map` as an interface, so that the streaming driver (reading, batching,
// lanes, ordering, formatting, writing: map_run.cpp) serves any mapper: a batch of reads in, one
// SAM/BAM record per read out (io/mapped_batch.hpp). The exact mapper (exact_mapper.hpp) and the
// inexact one (aln_mapper.hpp: bwa aln + samse, whose record step must see the batches in file order:
// finish()) implement it. Pairs go through the same driver: it maps each end's reads with map() and
// makes bwa sampe's records with AlnMapper::finish_pairs() (map_run.hpp).
//
// Threading contract: map() is called concurrently from lanes() threads, never twice at once for
// one lane (a lane may own a GPU stream), on batches in any order; a lane may use the task pool for
// its parallel work. finish() is then called once per batch from one thread, in input order (for
// work that must see the batches in file order, such as bwa's random draws). MappedBatch::record()
// is called concurrently for different reads of one batch, after finish(). prepare() is called on
// each parsed batch before it is mapped (from the parse stage, in input order).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "evk/task_pool.hpp"
#include "io/mapped_batch.hpp"
#include "io/read_batch.hpp"

namespace evk::barracuda_exact {

// Seconds spent by one lane (summed over lanes by the driver). match: the lane's search (exact
// matching, or the inexact search with its transfers and kernel and the CPU search of the reads the
// GPU handed back: fallback); lookup: the exact mapper's SA rows -> positions; records: finish() (the
// inexact mapper's samse: primary draws, SA rows -> positions, CIGAR/MD/NM, tags).
struct MapTimes {
  double transfer = 0, kernel = 0, match = 0, lookup = 0, fallback = 0, records = 0;
  double later_passes = 0;  // the inexact search's later GPU passes (reads the first pass handed back)
  std::array<double, kMapLaterPasses> pass{};  // each of them
  void add(const MapTimes& o) {
    transfer += o.transfer;
    kernel += o.kernel;
    match += o.match;
    lookup += o.lookup;
    fallback += o.fallback;
    later_passes += o.later_passes;
    for (std::size_t k = 0; k < kMapLaterPasses; ++k) pass[k] += o.pass[k];
    records += o.records;
  }
};

// What every record carries beyond its mapping: the read group of `-R` (RG:Z right after the core
// fields, where bwa writes it) and bwa aln's -R (X1 only for hits with X0 <= max_top2).
struct RecordOptions {
  std::string rg_id;  // empty: none
  int max_top2 = 30;
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

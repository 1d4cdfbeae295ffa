// The inexact mapper behind `map`: bwa aln's search (core/aln_search on the CPU, the
// inexact kernel through core/aln_gpu on one or more GPUs, several streams each) in the pipeline's
// lanes, then bwa samse's records: the primary hits drawn in input order (finish(): bwa's random
// generator sees the reads in file order), positions, CIGAR/MD/NM and tags per read in parallel.
// Output equal to bwa aln | bwa samse (and to the tests' serial oracle) for batches of bwa's
// 0x40000 reads (kSampeBatch; bwa limits gap opens per batch, which matters only with -o above the
// batch's maximum differences).
// Pairs (map_run.hpp): map() searches each end's reads of a batch of pairs (a lane, one end after
// the other), then finish_pairs() makes bwa sampe's records of the batch in input order.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/aln_options.hpp"
#include "core/aln_record.hpp"
#include "core/aln_search.hpp"
#include "core/index.hpp"
#include "core/rand48.hpp"
#include "core/sampe.hpp"
#include "map/map_options.hpp"
#include "core/samse.hpp"
#include "map/mapper.hpp"

namespace evk::barracuda_exact {

// The inexact mapper's results for a batch: the hit intervals of each read, then its record.
class AlnMapped : public MappedBatch {
 public:
  explicit AlnMapped(const RecordOptions& ro) : ro_(&ro) {}
  bool record(const ReadBatch& reads, std::size_t i, bam1_t* rec) const override;
  bool unmatched(std::size_t i) const override;
  MapCounts counts() const override { return counts_; }
  std::vector<int> len;        // searched length of each read (after -q trimming)
  AlnBatch alns;               // hit intervals, in search order
  std::uint64_t handed_back = 0;      // reads the GPU handed back to the CPU search
  std::uint64_t first_pass_back = 0;  // reads its first pass handed back (to the later GPU passes)
  std::array<std::uint64_t, kMapLaterPasses> pass_reads{}, pass_answered{};  // per later pass
  std::vector<std::uint64_t> pos;  // GPU: text positions of the hit rows (core/aln_positions.hpp)
  std::vector<AlnDraw> draws;  // finish(): bwa's draws of the primary hits
  std::vector<AlnRecord> recs; // finish(): the records
  MapCounts counts_;

 private:
  const RecordOptions* ro_;
};

// A batch of pairs' records in output order: read 1 and read 2 of pair i are reads 2i and 2i + 1
// of the interleaved batch given to record() (read_batch.hpp's interleave_pairs).
class AlnPairMapped : public MappedBatch {
 public:
  explicit AlnPairMapped(const RecordOptions& ro) : ro_(&ro) {}
  bool record(const ReadBatch& pairs, std::size_t i, bam1_t* rec) const override;
  bool unmatched(std::size_t i) const override;
  MapCounts counts() const override { return counts_; }
  std::vector<AlnRecord> rec[2];  // each end's records, pair by pair
  MapCounts counts_;

 private:
  const RecordOptions* ro_;
};

// The counts of one record (reads, mapped unique/repeat, unmatched, gapped, by edit distance ...).
void aln_count(MapCounts& c, const AlnRecord& r);

class AlnMapper : public Mapper {
 public:
  // The CPU backend: `lanes` batches searched at once on the task pool.
  AlnMapper(const BwtIndex& idx, const AlnOptions& opt, int lanes, const RecordOptions& ro = {});
  // The GPU backend: `streams` lanes per GPU (gpus: the device, and the inexact kernel's variant:
  // its configuration BLOCK_W/STACK_CAP/THREADS_PER_SM and source; empty: the original), each with
  // its own aligner (stream, buffers) and its lookup of the hits' text positions on the GPU.
  // gpu_passes: the later GPU passes over the reads the first pass hands back (0-3; then the CPU).
  // batch_reads: the batches' size, for the device memory their buffers take (a GPU without room
  // for `streams` streams beside the index gets fewer: core/aln_passes.hpp's aln_stream_plan).
  AlnMapper(const BwtIndex& idx, const AlnOptions& opt, const std::vector<GpuPlan>& gpus, int streams,
            const RecordOptions& ro = {}, int gpu_passes = 3, std::size_t batch_reads = kSampeBatch);
  ~AlnMapper() override;
  int lanes() const override { return lanes_; }
  void map(int lane, const ReadBatch& reads, std::unique_ptr<MappedBatch>& out, TaskPool& pool,
           MapTimes& times) override;
  void finish(MappedBatch& out, const ReadBatch& reads, TaskPool& pool, MapTimes& times) override;
  void prepare(ReadBatch& reads) const override { reads.drop_empty(); }  // bwa: no record for an empty read
  // Pairs (bwa sampe): once per batch of pairs, in input order, after map() of both ends (`one`,
  // `two`: what map() gave for r1 and r2, pair i being read i of each); the records into `out`.
  // The insert size is estimated per batch (bwa's: kSampeBatch pairs), the previous batch's
  // estimate standing in when a batch has too few good pairs.
  void finish_pairs(const MappedBatch& one, const MappedBatch& two, const ReadBatch& r1, const ReadBatch& r2,
                    const PeOptions& pe, AlnPairMapped& out, TaskPool& pool, MapTimes& times);
  const RecordOptions& record_options() const { return ro_; }
  std::string describe() const override;
  std::string kernel_origin() const override;
  // Tests: poison the GPU's position lookups before each launch.
  void poison_gpu_outputs();

 private:
  struct Gpu;
  const BwtIndex& idx_;
  AlnOptions opt_;
  RecordOptions ro_;
  int lanes_ = 1;
  Rand48 rng_;
  IsizeInfo last_isize_;      // pairs: the previous batch's insert size
  bool paired_ = false;       // finish_pairs() was called (describe() names sampe)
  std::unique_ptr<Gpu> gpu_;  // null: the CPU backend
};

}  // namespace evk::barracuda_exact

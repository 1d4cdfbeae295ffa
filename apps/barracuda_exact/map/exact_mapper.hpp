// The exact mapper behind `map`: bwa aln's exact branch (core/match) on the CPU or BarraCUDA's
// kernel on one or more GPUs (several streams each), then SA rows -> positions (core/hits) and
// records as `bwa samse` writes them for exact hits.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/hits.hpp"
#include "core/index.hpp"
#include "map/map_options.hpp"
#include "map/mapper.hpp"

namespace evk::barracuda_exact {

// The exact mapper's results for a batch: (k, l) and the resolved hit of every read.
class ExactMapped : public MappedBatch {
 public:
  ExactMapped(const BwtIndex& idx, const RecordOptions& ro) : idx_(&idx), ro_(&ro) {}
  bool record(const ReadBatch& reads, std::size_t i, bam1_t* rec) const override;
  bool unmatched(std::size_t i) const override { return !hits[i].mapped(); }
  MapCounts counts() const override;
  std::vector<KL> kl;
  std::vector<Hit> hits;

 private:
  const BwtIndex* idx_;
  const RecordOptions* ro_;
};

class ExactMapper : public Mapper {
 public:
  // The CPU backend: `lanes` batches matched at once on the task pool.
  ExactMapper(const BwtIndex& idx, int lanes, const RecordOptions& ro = {});
  // The GPU backend: `streams` lanes per GPU, each with its own CUDA stream and pinned buffers.
  ExactMapper(const BwtIndex& idx, const std::vector<GpuPlan>& gpus, int streams, const RecordOptions& ro = {});
  ~ExactMapper() override;
  int lanes() const override { return lanes_; }
  void map(int lane, const ReadBatch& reads, std::unique_ptr<MappedBatch>& out, TaskPool& pool,
           MapTimes& times) override;
  std::string describe() const override;
  std::string kernel_origin() const override;
  // Tests: poison every GPU output before each launch.
  void poison_gpu_outputs();

 private:
  struct Gpu;
  const BwtIndex& idx_;
  RecordOptions ro_;
  int lanes_ = 1;
  std::unique_ptr<Gpu> gpu_;  // null: the CPU backend
};

}  // namespace evk::barracuda_exact

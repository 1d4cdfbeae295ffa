// SAM/BAM output of the inexact pipeline through htslib: records as `bwa samse`/`bwa sampe` print
// them (fields and tags in bwa's order), an optional read group (`-R '@RG\tID:...'`, bwa's rules).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/aln_record.hpp"
#include "core/index.hpp"
#include "io/read_batch.hpp"

struct bam1_t;

namespace evk::barracuda_exact {

// A read group line as given on the command line (`\t` escaped): checked as bwa_set_rg checks it
// (starts with @RG, no literal tab, has an ID) and unescaped. Throws InputError naming `-R`.
struct ReadGroup {
  std::string line;  // unescaped, empty = none
  std::string id;
};
ReadGroup parse_read_group(const std::string& text);

// Fills b with one record (name, sequence and qualities as read: FASTQ characters, empty = none).
// Returns false when htslib refuses it.
bool aln_record_to_bam(bam1_t* b, std::string_view name, std::string_view seq, std::string_view qual,
                       const AlnRecord& r, const std::string& rg_id);

// The @PG line's program (the bwa drop-in writes bwa's).
struct SamProgram {
  std::string id = "barracuda_exact", name = "barracuda_exact", version;  // version "" = no VN
};

class AlnSamWriter {
 public:
  // path: *.sam, *.bam or "-"; written to `file` (a temporary name, or "-"); threads: BGZF threads;
  // level: BAM compression level 1-9 (-1: htslib's default).
  AlnSamWriter(const std::string& path, const std::string& file, const BwtIndex& idx, const std::string& command_line,
               const ReadGroup& rg, int threads = 0, const SamProgram& program = {}, int level = -1);
  ~AlnSamWriter();
  AlnSamWriter(const AlnSamWriter&) = delete;
  AlnSamWriter& operator=(const AlnSamWriter&) = delete;
  // Single end: record i of read i.
  void write(const ReadBatch& reads, const std::vector<AlnRecord>& recs);
  // Paired: read 1's and read 2's record of pair i, in that order.
  void write_pairs(const ReadBatch& r1, const ReadBatch& r2, const std::vector<AlnRecord>& rec1,
                   const std::vector<AlnRecord>& rec2);
  void close();  // flushes; InputError when a write failed

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evk::barracuda_exact

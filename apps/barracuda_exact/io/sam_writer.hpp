// SAM/BAM output through htslib, and the optional FASTQ.gz of the reads without a hit.
//
// Two paths with byte-identical output. The streaming path: format() builds the records of a
// batch in parallel parts (each read's bam1_t from its mapper, then its BAM bytes exactly as
// bam_write1 lays them out, or its SAM line by sam_format1), and write() hands the parts to BGZF in
// order, record by record with bam_write1's block-boundary rule, so htslib's thread pool
// (hts_set_threads) compresses the blocks. The serial path, write_serial(), is sam_write1 per
// record: the oracle the streaming path is tested against (tests/barracuda_exact/serial_map).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/damage.hpp"
#include "core/index.hpp"
#include "io/mapped_batch.hpp"
#include "io/read_batch.hpp"
#include "evk/task_pool.hpp"

namespace evk::barracuda_exact {

// Header and output choices beyond the defaults (the bwa drop-in writes bwa's @PG; `-R` adds a read
// group line; its RG:Z tag on every record is the mapper's, see map/mapper.hpp's RecordOptions).
struct SamOptions {
  std::string pg_id = "barracuda_exact", pg_name = "barracuda_exact", pg_version;
  std::string rg_line;        // a whole "@RG\tID:..." header line (tabs, not escapes); empty: none
  bool uncompressed = false;  // BAM with uncompressed BGZF blocks (also on stdout with "-"), for pipes
  int level = -1;             // BAM compression level 1-9 (-1: htslib's default, 6)
  bool damage = false;        // count the damage profile (core/damage.hpp) of the records written
  DamageOptions damage_options;
};

// A batch's output bytes, formatted in parallel parts of consecutive reads.
struct FormattedBatch {
  struct Part {
    std::string records;                // BAM record bytes or SAM lines
    std::vector<std::uint32_t> sizes;   // BAM: bytes of each record
    std::string unmatched;              // FASTQ/FASTA text of the part's unmatched reads
    std::unique_ptr<DamageProfile> damage;  // the part's records' damage profile (SamOptions::damage)
  };
  std::vector<Part> parts;
  std::size_t parts_used = 0;
};

class SamWriter {
 public:
  // path: *.sam, *.bam or "-" (SAM on stdout, BAM with options.uncompressed); written to `file` (a
  // temporary name, or "-"). threads: BGZF compression threads for BAM (0 = all cores).
  SamWriter(const std::string& path, const std::string& file, const BwtIndex& idx, const std::string& command_line,
            int threads = 0, const SamOptions& options = {});
  ~SamWriter();
  SamWriter(const SamWriter&) = delete;
  SamWriter& operator=(const SamWriter&) = delete;
  bool bam() const;
  // The streaming path. format() may run while write() writes an earlier batch.
  void format(const ReadBatch& reads, const MappedBatch& mapped, FormattedBatch& out, TaskPool& pool,
              bool with_unmatched) const;
  void write(const FormattedBatch& f);
  // The serial path (the tests' oracle): sam_write1 record by record.
  void write_serial(const ReadBatch& reads, const MappedBatch& mapped);
  void close();  // flushes; throws InputError when the write failed
  // The damage profile of the records written so far (SamOptions::damage), else null.
  const DamageProfile* damage() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when `path` names a BAM file (by extension); InputError for neither .sam, .bam nor "-".
bool sam_path_is_bam(const std::string& path);

class FastqWriter {  // gzip (BGZF) FASTQ; FASTA records for reads without qualities
 public:
  FastqWriter(const std::string& path, const std::string& file, int threads = 1);
  ~FastqWriter();
  FastqWriter(const FastqWriter&) = delete;
  FastqWriter& operator=(const FastqWriter&) = delete;
  void write(const FormattedBatch& f);                                  // the parts' unmatched text
  void write_serial(const ReadBatch& reads, const MappedBatch& mapped);  // the serial path
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evk::barracuda_exact

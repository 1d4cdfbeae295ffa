// SAM/BAM output through htslib, record for record as `bwa samse` writes them for exact hits, and
// the optional FASTQ.gz of reads without an exact hit (for a downstream aligner).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/hits.hpp"
#include "io/sequences.hpp"

namespace evk::barracuda_exact {

// Header and tag choices beyond the defaults (the bwa drop-in writes bwa's @PG and read groups).
struct SamOptions {
  std::string pg_id = "barracuda_exact", pg_name = "barracuda_exact", pg_version;
  std::string rg_line;  // a whole "@RG\tID:..." header line (tabs, not escapes); empty: none
  std::string rg_id;    // its ID: every record gets RG:Z:<rg_id>
  int max_top2 = 30;    // X1 is written only for hits with X0 <= this (bwa aln -R)
};

class SamWriter {
 public:
  // path: *.sam, *.bam or "-" (SAM on stdout); written to `file` (a temporary name, or "-").
  // threads: BGZF compression threads for BAM (0 = all cores).
  SamWriter(const std::string& path, const std::string& file, const BwtIndex& idx, const std::string& command_line,
            int threads = 0, const SamOptions& options = {});
  ~SamWriter();
  SamWriter(const SamWriter&) = delete;
  SamWriter& operator=(const SamWriter&) = delete;
  void write(const ReadBatch& reads, const std::vector<Hit>& hits);
  void close();  // flushes; throws InputError when the write failed

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when `path` names a BAM file (by extension); InputError for neither .sam, .bam nor "-".
bool sam_path_is_bam(const std::string& path);

class FastqWriter {  // gzip (BGZF) FASTQ; FASTA records for reads without qualities
 public:
  FastqWriter(const std::string& path, const std::string& file);
  ~FastqWriter();
  FastqWriter(const FastqWriter&) = delete;
  FastqWriter& operator=(const FastqWriter&) = delete;
  void write(const ReadBatch& reads, const std::vector<Hit>& hits);  // reads without a hit within a contig
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evk::barracuda_exact

// FASTA/FASTQ input through htslib (BGZF reads plain and gzip files; htslib's kseq parses records).
// References (genomes) are read whole. ReadSource streams reads serially (kseq): the path that the
// streaming reader of `map` (text_input, record_scan, read_batch) is tested against, and the bwa
// drop-ins' reader.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/index.hpp"
#include "io/read_batch.hpp"

namespace evk::barracuda_exact {

// Reads a FASTA reference (plain or gzip). Throws InputError for a missing/empty/non-FASTA file,
// an empty contig, a character that is not an IUPAC nucleotide code, or a damaged gzip stream.
std::vector<RefSeq> read_reference(const std::string& path);

class ReadSource {
 public:
  explicit ReadSource(const std::string& path);  // "-" = stdin
  ~ReadSource();
  ReadSource(const ReadSource&) = delete;
  ReadSource& operator=(const ReadSource&) = delete;
  // Fills up to max_reads reads (or about max_bases bases); false at the end of the file.
  // Throws InputError for a damaged record, truncated gzip, or a read longer than max_len.
  bool next(ReadBatch& batch, std::size_t max_reads, std::size_t max_bases, std::uint32_t max_len);
  std::uint64_t records() const { return n_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  std::uint64_t n_ = 0;
};

}  // namespace evk::barracuda_exact

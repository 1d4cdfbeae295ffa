// The second stage of `map`: decompressed text -> FASTA/FASTQ record boundaries, serially (the
// structure of a FASTQ file can only be known from its start), without copying: each record is a
// set of spans into the text chunks, which the batch keeps alive. Parsing the spans into reads is
// the next, parallel stage (read_batch.hpp).
//
// Semantics are those of htslib's kseq_read (what the serial path and bwa use): text before the
// first '>' or '@' (and after a FASTQ record, before the next) is skipped; the name ends at the
// first white space; sequence lines run until a line starting with '>', '@' or '+'; empty lines are
// skipped; a trailing '\r' per line is dropped; the quality is read line by line until it is at
// least as long as the sequence. On top of kseq, a record cut short is an error rather than a
// shorter record: a '@' record without its '+' line, a file ending after '+' or inside the
// quality, or after a record's first character.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "io/text_input.hpp"

namespace evk::barracuda_exact {

struct RecordSpan {
  const char* name = nullptr;  // as in the file (the /1 /2 trimming happens when parsing)
  std::uint32_t name_len = 0;
  const char* seq = nullptr;
  std::uint32_t seq_len = 0;
  const char* qual = nullptr;  // nullptr: a FASTA record (no qualities); else seq_len characters
};

struct ScanBatch {
  std::uint64_t first = 0;  // number of the batch's first record in the file (0-based)
  std::vector<RecordSpan> recs;
  std::size_t bases = 0;
  std::vector<std::shared_ptr<const TextChunk>> keep;  // the chunks the spans point into
  std::deque<std::string> joined;                      // multi-line sequences and qualities
  void clear() {
    recs.clear();
    bases = 0;
    keep.clear();
    joined.clear();
  }
};

class RecordScanner {
 public:
  explicit RecordScanner(TextInput& in) : in_(in) {}
  // The next records, up to max_reads or until max_bases bases; false when none is left. Throws
  // InputError for a damaged or truncated record, or a read longer than max_len.
  bool next(ScanBatch& b, std::size_t max_reads, std::size_t max_bases, std::uint32_t max_len);
  std::uint64_t records() const { return n_; }
  double busy_seconds() const { return busy_s_; }

 private:
  bool next_record(ScanBatch& b, RecordSpan& r);
  TextInput& in_;
  std::shared_ptr<const TextChunk> cur_;
  const char *p_ = nullptr, *end_ = nullptr;
  bool done_ = false;
  std::uint64_t n_ = 0;
  double busy_s_ = 0;
};

}  // namespace evk::barracuda_exact

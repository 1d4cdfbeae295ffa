// The second stage of `map`: decompressed text -> FASTA/FASTQ record boundaries, serially (the
// structure of a FASTQ file can only be known from its start), without copying: each record is a
// set of spans into the text chunks, which the batch keeps alive. Checking and parsing the spans
// into reads is the next, parallel stage (read_batch.hpp).
//
// Records are read as htslib's kseq_read reads them (what the serial path and bwa use): the name
// ends at the first white space; sequence lines run until a line starting with '>', '@' or '+';
// empty lines are skipped; a trailing '\r' per line is dropped; the quality is read line by line
// until it is at least as long as the sequence. On top of kseq, the structural rules of
// read_rules.hpp (no text between records, one format per file, no record cut short), with the
// same messages as the serial path.
//
// Errors are delivered in order: a structural error (or one of the input's: a damaged or cut
// compressed file) ends the batch that holds the records before it, in ScanBatch::error, so that a
// content error of an earlier record, found when the batch is checked, is reported first.
#pragma once
#include <cstdint>
#include <deque>
#include <exception>
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
  std::uint32_t max_len = 0;  // the longest read allowed (checked with the content, read_batch.hpp)
  std::exception_ptr error;   // the InputError that follows the records (the scanner has stopped)
  std::vector<RecordSpan> recs;
  std::size_t bases = 0;
  std::vector<std::shared_ptr<const TextChunk>> keep;  // the chunks the spans point into
  std::deque<std::string> joined;                      // multi-line sequences and qualities
  void clear() {
    recs.clear();
    bases = 0;
    keep.clear();
    joined.clear();
    error = nullptr;
  }
};

class RecordScanner {
 public:
  explicit RecordScanner(TextInput& in) : in_(in) {}
  // The next records, up to max_reads or until max_bases bases; false at the clean end of the file
  // (nothing left). A structural error ends the batch (b.error set, true returned; the scanner has
  // stopped): check_batch / parse_batch (read_batch.hpp) rethrow it after the records' own errors.
  bool next(ScanBatch& b, std::size_t max_reads, std::size_t max_bases, std::uint32_t max_len);
  std::uint64_t records() const { return n_; }
  double busy_seconds() const { return busy_s_; }

 private:
  bool next_record(ScanBatch& b, RecordSpan& r);
  TextInput& in_;
  std::shared_ptr<const TextChunk> cur_;
  const char *p_ = nullptr, *end_ = nullptr;
  bool done_ = false, failed_ = false;
  char format_ = 0;          // '>' or '@': the first record's header character
  bool need_header_ = true;  // at the start, and after a FASTQ record: only blank lines may come
  std::uint64_t n_ = 0;
  double busy_s_ = 0;
};

}  // namespace evk::barracuda_exact

// A batch of reads as every mapper gets it: names, bases and qualities in three flat buffers and
// the base codes of core/ (ReadCodes), so a batch is a handful of allocations that are reused from
// batch to batch, not three strings per read. parse_batch checks scanned records (read_rules.hpp)
// and fills a batch from them in parallel; for pairs, the two files' records interleaved (read 1
// and read 2 of pair i are reads 2i and 2i + 1: the order of the output records).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/match.hpp"
#include "io/record_scan.hpp"
#include "evk/task_pool.hpp"

namespace evk::barracuda_exact {

struct ReadBatch {
  std::uint64_t first = 0;              // number of the batch's first read in the input (0-based)
  std::string names;                    // read names (bwa's /1 /2 trimmed), concatenated
  std::vector<std::uint32_t> name_end;  // end of read i's name in `names`
  std::string bases;                    // as read (any case, any letter): read i at codes.offset[i]
  std::string quals;                    // FASTQ qualities, same offsets as bases
  std::vector<std::uint8_t> has_qual;   // 0 for a FASTA record (and an empty FASTQ one)
  ReadCodes codes;                      // 0..3 = ACGT, 4 = other; offset and length per read

  std::size_t size() const { return codes.size(); }
  std::string_view name(std::size_t i) const {
    const std::uint32_t b = i ? name_end[i - 1] : 0;
    return {names.data() + b, name_end[i] - b};
  }
  std::string_view seq(std::size_t i) const { return {bases.data() + codes.offset[i], codes.len[i]}; }
  std::string_view qual(std::size_t i) const {  // empty when the read has none
    return has_qual[i] ? std::string_view(quals.data() + codes.offset[i], codes.len[i]) : std::string_view();
  }
  void clear();
  // Appends one read (the serial path); qual: nullptr or seq.size() characters.
  void add(std::string_view name, std::string_view seq, const char* qual);
  // Appends read i of another batch (its name as it is there).
  void add(const ReadBatch& other, std::size_t i);
  // Removes the reads without bases (bwa aln/samse make no record for them); returns how many.
  std::size_t drop_empty();

 private:
  void append(std::string_view name, std::string_view seq, const char* qual);
};

// bwa trims a trailing "/1" or "/2" from read names (names of more than 2 characters).
std::string_view trim_mate_suffix(std::string_view name);
// The content rules of read_rules.hpp on every record of a scanned batch (in parallel; the first
// broken rule in file order is thrown), then the batch's structural error, if any.
void check_batch(const std::string& path, const ScanBatch& scanned, TaskPool& pool);

// The reads of a scanned batch, checked (check_batch) and converted in parallel chunks on the pool.
void parse_batch(const std::string& path, const ScanBatch& scanned, ReadBatch& out, TaskPool& pool);
// Pairs: both files' batches checked (file 1's first), then their reads interleaved (same counts).
void parse_pairs(const std::string& path1, const ScanBatch& s1, const std::string& path2, const ScanBatch& s2,
                 ReadBatch& out, TaskPool& pool);

// Pairs: that the batches of the two files (read i of a with read i of b; a.first = the number of
// the pair before the batch) pair up, as bwa sampe needs them: the same number of reads, the same
// names (after trim_mate_suffix), both ends FASTQ or both FASTA, no empty read. InputError naming
// the file at fault otherwise (the first problem in this order: counts, then pair by pair names and
// formats, then empty reads of file 1, then of file 2).
void check_pairs(const std::string& path1, const ReadBatch& a, const std::string& path2, const ReadBatch& b);
// Pairs: read i of a and of b as reads 2i and 2i + 1 of out (the output's order), in parallel.
void interleave_pairs(const ReadBatch& a, const ReadBatch& b, ReadBatch& out, TaskPool& pool);

}  // namespace evk::barracuda_exact

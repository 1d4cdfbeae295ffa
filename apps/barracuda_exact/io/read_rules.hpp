// The rules a reads file must follow, and one wording for every refusal, shared by both readers of
// `map`: the serial one (sequences.cpp: htslib's kseq) and the streaming one (record_scan.cpp finds
// the records, read_batch.cpp checks and parses them in parallel). Both refuse exactly the same
// files with exactly the same message (tested on random text).
//
// Structure (kseq's grammar, stricter where a cut or foreign file would otherwise pass):
//   - before a record (at the start, and after a FASTQ record) only blank lines may come; the first
//     record's header character ('>' or '@') sets the file's format and every record must match it;
//   - a header at the very end of the file has no name; a FASTQ record needs its '+' line and a
//     quality as long as its sequence; a FASTA file has no '+' lines;
//   - a file without records is refused.
// Content of each record, checked in this order: a name, quality characters within '!'..'~', at
// most max_len bases, a FASTA record has bases, every base an IUPAC code or '.', the name (after
// bwa's /1 /2 trimming) at most 254 characters.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace evk::barracuda_exact::read_rules {

std::string printable(char c);               // 'A' or 0x0a
std::string shown(std::string_view name);    // cut after 80 characters
// "record N (NAME)" for the record of 0-based index i.
std::string record_named(std::uint64_t i, std::string_view name);

// Structural refusals (i: the 0-based index of the record being read).
[[noreturn]] void not_a_header(const std::string& path, std::uint64_t i, char c);  // text where a header belongs
[[noreturn]] void mixed_formats(const std::string& path, std::uint64_t i, char header, char format);
[[noreturn]] void no_name(const std::string& path, std::uint64_t i);
[[noreturn]] void quality_length(const std::string& path, std::uint64_t i, std::string_view name, std::size_t quals,
                                 std::size_t bases);
[[noreturn]] void no_quality(const std::string& path, std::uint64_t i, std::string_view name);
[[noreturn]] void quality_in_fasta(const std::string& path, std::uint64_t i, std::string_view name);
[[noreturn]] void no_reads(const std::string& path);

// The content rules of one record (qual: nullptr for a FASTA record); throws the first broken one.
void check_record(const std::string& path, std::uint64_t i, std::string_view name, std::string_view seq,
                  const char* qual, std::uint32_t max_len);

}  // namespace evk::barracuda_exact::read_rules

#include "io/read_rules.hpp"

#include <cstdio>

#include "core/index.hpp"
#include "evk/error.hpp"
#include "io/read_batch.hpp"

namespace evk::barracuda_exact::read_rules {
namespace {

struct Tables {
  bool base[256];  // an IUPAC code or '.'
  bool qual[256];  // '!'..'~'
  Tables() {
    for (int c = 0; c < 256; ++c) {
      base[c] = is_iupac(static_cast<char>(c)) || c == '.';
      qual[c] = c >= 33 && c <= 126;
    }
  }
};
const Tables kTables;

std::string record_at(std::uint64_t i) { return "record " + std::to_string(i + 1); }

}  // namespace

std::string printable(char c) {
  if (c >= 33 && c <= 126) return std::string("'") + c + "'";
  char b[8];
  std::snprintf(b, sizeof b, "0x%02x", static_cast<unsigned char>(c));
  return b;
}

std::string shown(std::string_view name) {
  if (name.size() <= 80) return std::string(name);
  return std::string(name.substr(0, 80)) + "...";
}

std::string record_named(std::uint64_t i, std::string_view name) { return record_at(i) + " (" + shown(name) + ")"; }

void not_a_header(const std::string& path, std::uint64_t i, char c) {
  if (i == 0 && c == 0x1f) input_error(path, "damaged or truncated gzip header");
  input_error(path, i == 0 ? "not a FASTA or FASTQ file (starts with " + printable(c) + ")"
                           : "unexpected text after record " + std::to_string(i) + " (a '@' or '>' header line expected)");
}

void mixed_formats(const std::string& path, std::uint64_t i, char header, char format) {
  input_error(path, record_at(i) + ": a " + (header == '>' ? "FASTA" : "FASTQ") + " record in a " +
                        (format == '>' ? "FASTA" : "FASTQ") + " file");
}

void no_name(const std::string& path, std::uint64_t i) {
  input_error(path, record_at(i) + ": header line without a name (truncated?)");
}

void quality_length(const std::string& path, std::uint64_t i, std::string_view name, std::size_t quals,
                    std::size_t bases) {
  input_error(path, record_named(i, name) + ": quality length differs from sequence length (" + std::to_string(quals) +
                        " qualities for " + std::to_string(bases) + " bases" + (quals < bases ? "; truncated?)" : ")"));
}

void no_quality(const std::string& path, std::uint64_t i, std::string_view name) {
  input_error(path, record_named(i, name) + ": no '+' line and qualities (truncated FASTQ?)");
}

void quality_in_fasta(const std::string& path, std::uint64_t i, std::string_view name) {
  input_error(path, record_named(i, name) + ": a '+' quality line in a FASTA file");
}

void no_reads(const std::string& path) { input_error(path, "no reads (empty file)"); }

void check_record(const std::string& path, std::uint64_t i, std::string_view name, std::string_view seq,
                  const char* qual, std::uint32_t max_len) {
  if (name.empty()) input_error(path, record_at(i) + ": empty name");
  if (qual)
    for (std::size_t j = 0; j < seq.size(); ++j)
      if (!kTables.qual[static_cast<unsigned char>(qual[j])])
        input_error(path, record_named(i, name) + ": quality character " + printable(qual[j]) + " outside '!'..'~'");
  if (seq.size() > max_len)
    input_error(path, "read " + shown(name) + " has " + std::to_string(seq.size()) + " bases; at most " +
                          std::to_string(max_len) + " are supported");
  if (seq.empty() && !qual) input_error(path, record_named(i, name) + ": no bases (truncated FASTA?)");
  for (std::size_t j = 0; j < seq.size(); ++j)
    if (!kTables.base[static_cast<unsigned char>(seq[j])])
      input_error(path, record_named(i, name) + " position " + std::to_string(j + 1) + ": character " + printable(seq[j]) +
                            " is not a base (IUPAC code or '.')");
  const std::size_t n = trim_mate_suffix(name).size();
  if (n > 254) input_error(path, record_at(i) + ": name of " + std::to_string(n) + " characters; SAM allows at most 254");
}

}  // namespace evk::barracuda_exact::read_rules

// Inputs of the pipeline tests (CPU and GPU): reads written in every legal FASTA/FASTQ way and
// the compressed forms of a text (gzip, multi-member gzip, BGZF).
#pragma once
#include <filesystem>
#include <string>

#include "core/index.hpp"
#include "evk_testing.hpp"

namespace bct {

std::string forward_text(const evk::barracuda_exact::BwtIndex& idx);
// n records mapping (or not) to the reference text fwd, written in many legal ways: 4-line FASTQ,
// wrapped sequences and qualities (quality lines may start with '@' or '+'), CRLF lines, comments,
// /1 /2 names, blank lines, empty FASTQ reads; a FASTA file (wrapped, CRLF ...) for seeds 5, 11, ...
// (one format per file, nothing but blank lines before a record: the rules of io/read_rules.hpp).
std::string varied_reads(const std::string& fwd, std::size_t n, std::uint64_t seed);
std::string gzip_text(const evk::testing::TempDir& dir, const std::string& text);
// Several gzip members cut at arbitrary bytes (the third one empty).
std::string multi_member_gzip(const evk::testing::TempDir& dir, const std::string& text, std::uint64_t seed);
// BGZF through htslib (with its end-of-file block); false on failure.
bool write_bgzf(const std::filesystem::path& p, const std::string& text);

}  // namespace bct

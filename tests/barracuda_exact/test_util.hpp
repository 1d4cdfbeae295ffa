// Helpers of the barracuda_exact CPU tests: small references, brute-force oracles, file utilities.
#pragma once
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/index.hpp"

namespace bct {

bool have(const std::string& program);  // on PATH
std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, const std::string& s);
std::string random_dna(std::mt19937_64& rng, std::size_t n);
std::string revcomp(const std::string& s);
// Writes ref as FASTA (60 columns).
void write_fasta(const std::filesystem::path& p, const std::vector<evk::barracuda_exact::RefSeq>& ref);
// A reference with 3 contigs, repeats (also reverse-complemented and across contigs), N runs and
// IUPAC codes (both cases).
std::vector<evk::barracuda_exact::RefSeq> tricky_reference(std::uint64_t seed);
// The SAM records (non-header lines) split into fields.
std::vector<std::vector<std::string>> sam_records(const std::string& sam_text);
// Files in dir whose name contains ".tmp" (left-over temporaries).
int temp_files_in(const std::filesystem::path& dir);

}  // namespace bct

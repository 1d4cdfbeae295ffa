// The oracle of the inexact-mapping tests: bwa 0.7.17 run here (bwa index / aln / samse / sampe),
// its .sai files read back (the per-read hit intervals `bwa aln` found, in its order), read sets
// simulated with art_illumina (also with raised indel rates) and reads with planted differences.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/aln_search.hpp"
#include "core/match.hpp"
#include "io/sequences.hpp"

namespace bct {

bool have_bwa();  // bwa and samtools on PATH

// bwa aln's .sai: magic, its options, then per read the hit count and the hits (bwt_aln1_t).
struct Sai {
  std::int32_t s_mm = 0, s_gapo = 0, s_gape = 0, mode = 0, max_diff = 0, max_gapo = 0, max_gape = 0;
  float fnr = 0;
  evk::barracuda_exact::AlnBatch alns;
};
Sai read_sai(const std::filesystem::path& p);

// Runs `bwa index` on a private copy of fasta in dir/bwa/ and returns the copy's path.
std::string bwa_index_copy(const std::filesystem::path& dir, const std::string& fasta);
// `bwa aln ARGS REF READS > OUT` (stderr dropped); true when it exited 0.
bool bwa_aln(const std::string& args, const std::string& ref, const std::string& reads, const std::filesystem::path& sai);

// All reads of a FASTQ/FASTA file, their codes trimmed as `bwa aln -q trim` trims them.
struct Reads {
  evk::barracuda_exact::ReadBatch batch;
  evk::barracuda_exact::ReadCodes codes;  // trimmed
};
Reads load_reads(const std::string& path, int trim_qual = 0);

// art_illumina reads of fasta (single end: OUT.fq; paired: OUT1.fq OUT2.fq); extra: more options
// (e.g. raised indel rates). Returns false when art_illumina failed or is missing.
bool art_reads(const std::string& fasta, const std::filesystem::path& out_prefix, int len, int count, int seed,
               bool paired, const std::string& extra = "");

// Reads sampled from fasta's first contigs with planted substitutions, insertions, deletions and
// N, both strands, lengths len_min..len_max, written as FASTQ with random qualities; a third of
// them start in the `hot` ranges [begin, end) of the concatenated contigs (repeats), if any.
void planted_reads(const std::string& fasta, const std::filesystem::path& out, int n, int len_min, int len_max,
                   std::uint64_t seed, const std::vector<std::pair<std::size_t, std::size_t>>& hot = {});
// Pairs (OUT1.fq, OUT2.fq) from fragments of ~frag bp (sd frag/10): read 1 forward at the
// fragment's start, read 2 reverse-complemented at its end, with planted substitutions, indels and
// N; about 8% have one end mutated beyond bwa aln's reach (mate rescue), 4% ends from unrelated
// places (discordant), 3% one end random (unmapped mate).
void planted_pairs(const std::string& fasta, const std::filesystem::path& out_prefix, int n, int len, int frag,
                   std::uint64_t seed, const std::vector<std::pair<std::size_t, std::size_t>>& hot = {});
// The repeat ranges of tricky_reference() for planted_reads.
std::vector<std::pair<std::size_t, std::size_t>> tricky_repeats();

}  // namespace bct

// The damage profile's files (core/damage.hpp): a BAM/SAM and its reference read into a profile,
// and the profile written as mapDamage 2 writes it (misincorporation.txt, lgdistribution.txt).
#pragma once
#include <htslib/sam.h>

#include <string>

#include "core/damage.hpp"
#include "core/index.hpp"

namespace evk::barracuda_exact {

// Reads every record of bam (BAM, SAM or CRAM, through htslib) against the FASTA reference. The
// header's contigs must be in the FASTA with the same lengths, and at least one record must pass
// the filters; else InputError naming the file and the problem.
DamageProfile damage_from_bam(const std::string& bam, const std::string& fasta, const DamageOptions& opt);

// The profile's view of a BAM record (contig, position, flag, MAPQ, CIGAR, SEQ); false if unmapped.
bool damage_read(const bam1_t* b, DamageRead& out);

// A profile over the index's contigs, and the reference from (contig, pos) on, len bases (clipped
// to the contig), from the index (uppercase; the FASTA's ambiguous characters back where bwa's packing replaced them).
DamageProfile damage_profile(const BwtIndex& idx, const DamageOptions& opt);
std::string damage_span(const BwtIndex& idx, int contig, std::int64_t pos, std::int64_t len);
// The same into out (its buffer reused: no allocation per record in map --damage).
void damage_span(const BwtIndex& idx, int contig, std::int64_t pos, std::int64_t len, std::string& out);

// mapDamage's misincorporation.txt: "Chr End Std Pos A C G T Total G>A C>T ... S", contigs by name,
// 3p before 5p, + before -, positions 1..length. Written to a temporary name, renamed when complete.
void write_misincorporation(const DamageProfile& p, const std::string& path, const std::string& source);
// mapDamage's dnacomp.txt: "Chr End Std Pos A C G T Total", the composition table (5p: -around..-1,
// 1..length; 3p: -length..-1, 1..around).
void write_composition(const DamageProfile& p, const std::string& path, const std::string& source);
// mapDamage's lgdistribution.txt: "Std Length Occurences", lengths ascending per strand.
void write_lengths(const DamageProfile& p, const std::string& path, const std::string& source);

// A plot like mapDamage's Fragmisincorporation_plot, as SVG: the frequency of each substitution by
// position, 5' end (positions 1..length) on the left, 3' end (-length..-1) on the right; C>T red,
// G>A blue, the other ten grey. Each line carries its substitution and end as data attributes.
void write_damage_svg(const DamageProfile& p, const std::string& path);

// The frequency of C>T among reference C at the 5' end and of G>A among G at the 3' end, position
// i (0-based), over every contig and both strands.
double damage_ct5(const DamageProfile& p, int i);
double damage_ga3(const DamageProfile& p, int i);

}  // namespace evk::barracuda_exact

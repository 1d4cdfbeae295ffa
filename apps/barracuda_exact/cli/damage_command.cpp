// `barracuda_exact damage`: the ancient-DNA damage profile of a BAM against its reference, in
// mapDamage 2's files (PREFIX.misincorporation.txt, PREFIX.lgdistribution.txt) and a one-line summary.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli.hpp"
#include "io/damage_files.hpp"

namespace evk::barracuda_exact {
namespace {

struct DamageArgs {
  std::string ref, bam, prefix;
  DamageOptions opt;
};

void run_damage(const DamageArgs& a) {
  const DamageProfile p = damage_from_bam(a.bam, a.ref, a.opt);
  const std::string source = "reads " + a.bam + ", reference " + a.ref + ", MAPQ >= " + std::to_string(a.opt.min_mapq);
  write_misincorporation(p, a.prefix + ".misincorporation.txt", source);
  write_lengths(p, a.prefix + ".lgdistribution.txt", source);
  write_composition(p, a.prefix + ".dnacomp.txt", source);
  write_damage_svg(p, a.prefix + ".damage.svg");
  std::fprintf(stderr, "%llu reads; C>T at the 5' end %.4f (position 1), %.4f (2); G>A at the 3' end %.4f (1), %.4f (2)\n",
               static_cast<unsigned long long>(p.reads()), damage_ct5(p, 0), damage_ct5(p, 1), damage_ga3(p, 0), damage_ga3(p, 1));
}

}  // namespace

void add_damage_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("damage", "Ancient-DNA damage profile of mapped reads (mapDamage 2's misincorporation.txt "
                                           "and lgdistribution.txt): substitutions by position from each end, per strand");
  auto a = std::make_shared<DamageArgs>();
  cmd->add_option("REF", a->ref, "FASTA reference the reads were mapped to, plain or gzip")->required();
  cmd->add_option("BAM", a->bam, "Mapped reads: BAM, SAM or CRAM")->required();
  cmd->add_option("-o,--prefix", a->prefix, "Output prefix: PREFIX.misincorporation.txt, PREFIX.lgdistribution.txt, PREFIX.dnacomp.txt, PREFIX.damage.svg")->required();
  cmd->add_option("-l,--length", a->opt.length, "Positions counted from each end")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("-a,--around", a->opt.around, "Reference bases before and after each read in dnacomp.txt")
      ->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("-q,--min-mapq", a->opt.min_mapq, "Leave out reads below this MAPQ (0: every mapped read, as mapDamage)")
      ->check(CLI::Range(0, 255))->capture_default_str();
  cmd->callback([a] { run_damage(*a); });
}

}  // namespace evk::barracuda_exact

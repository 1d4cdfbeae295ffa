#include "aln_oracle.hpp"

#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "evk_testing.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;

namespace bct {

bool have_bwa() { return have("bwa") && have("samtools"); }

Sai read_sai(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + p.string());
  char magic[4];
  in.read(magic, 4);
  if (!in || std::memcmp(magic, "SAI\1", 4) != 0) throw std::runtime_error(p.string() + ": not a .sai");
  std::int32_t o[16];  // gap_opt_t: 7 ints, a float, 8 ints
  in.read(reinterpret_cast<char*>(o), sizeof o);
  Sai s;
  s.s_mm = o[0];
  s.s_gapo = o[1];
  s.s_gape = o[2];
  s.mode = o[3];
  std::memcpy(&s.fnr, &o[7], 4);
  s.max_diff = o[8];
  s.max_gapo = o[9];
  s.max_gape = o[10];
  std::int32_t n = 0;
  while (in.read(reinterpret_cast<char*>(&n), 4)) {
    for (std::int32_t i = 0; i < n; ++i) {
      std::uint64_t w[3];
      in.read(reinterpret_cast<char*>(w), sizeof w);
      if (!in) throw std::runtime_error(p.string() + ": truncated");
      bc::Aln a;  // bit fields n_mm:8 n_gapo:8 n_gape:8 score:20 n_ins:10 n_del:10, then k, l
      a.n_mm = static_cast<std::uint32_t>(w[0] & 0xff);
      a.n_gapo = static_cast<std::uint32_t>(w[0] >> 8 & 0xff);
      a.n_gape = static_cast<std::uint32_t>(w[0] >> 16 & 0xff);
      a.score = static_cast<int>(w[0] >> 24 & 0xfffff);
      a.n_ins = static_cast<std::uint32_t>(w[0] >> 44 & 0x3ff);
      a.n_del = static_cast<std::uint32_t>(w[0] >> 54 & 0x3ff);
      a.k = w[1];
      a.l = w[2];
      s.alns.alns.push_back(a);
    }
    s.alns.offset.push_back(static_cast<std::uint32_t>(s.alns.alns.size()));
  }
  return s;
}

std::string bwa_index_copy(const std::filesystem::path& dir, const std::string& fasta) {
  const auto bdir = dir / "bwa";
  std::filesystem::create_directories(bdir);
  const auto ref = bdir / std::filesystem::path(fasta).filename();
  std::filesystem::copy_file(fasta, ref, std::filesystem::copy_options::overwrite_existing);
  if (evk::testing::run("bwa index " + ref.string() + " 2>/dev/null").exit_code != 0)
    throw std::runtime_error("bwa index failed on " + fasta);
  return ref.string();
}

bool bwa_aln(const std::string& args, const std::string& ref, const std::string& reads, const std::filesystem::path& sai) {
  return evk::testing::run("bwa aln " + args + " " + ref + " " + reads + " > " + sai.string() + " 2>/dev/null").exit_code == 0;
}

Reads load_reads(const std::string& path, int trim_qual) {
  Reads r;
  bc::ReadSource src(path);
  bc::ReadBatch b;
  while (src.next(b, 1u << 20, ~std::size_t{0} >> 1, 1024)) {
    for (std::size_t i = 0; i < b.size(); ++i) r.batch.add(b, i);
  }
  for (std::size_t i = 0; i < r.batch.size(); ++i) {
    const std::string_view s = r.batch.seq(i), q = r.batch.qual(i);
    const int n = bc::trim_len(trim_qual, q.empty() ? nullptr : q.data(), static_cast<int>(s.size()));
    r.codes.add(s.data(), static_cast<std::size_t>(n));
  }
  return r;
}

bool art_reads(const std::string& fasta, const std::filesystem::path& out_prefix, int len, int count, int seed,
               bool paired, const std::string& extra) {
  if (!have("art_illumina")) return false;
  const std::string ss = len > 125 ? "HS25" : "HS20";
  std::string cmd = "art_illumina -ss " + ss + " -i " + fasta + " -l " + std::to_string(len) + " -c " +
                    std::to_string(count) + " -rs " + std::to_string(seed) + " -na -q " +
                    (paired ? "-p -m " + std::to_string(3 * len) + " -s " + std::to_string(len / 3) + " " : "") + extra +
                    " -o " + out_prefix.string() + " > /dev/null 2>&1";
  return evk::testing::run(cmd).exit_code == 0;
}

std::vector<std::pair<std::size_t, std::size_t>> tricky_repeats() { return {{990, 1160}, {11990, 14840}, {8990, 9160}}; }

void planted_reads(const std::string& fasta, const std::filesystem::path& out, int n, int len_min, int len_max,
                   std::uint64_t seed, const std::vector<std::pair<std::size_t, std::size_t>>& hot) {
  std::string fwd;
  for (const auto& s : bc::read_reference(fasta))
    for (char c : s.seq) fwd += "ACGTN"[bc::base_code(c)];
  std::mt19937_64 rng(seed);
  std::ostringstream o;
  static const char kB[] = "ACGT";
  for (int i = 0; i < n; ++i) {
    const int len = len_min + static_cast<int>(rng() % static_cast<std::uint64_t>(len_max - len_min + 1));
    std::size_t start = rng() % (fwd.size() - static_cast<std::size_t>(len) - 8);
    if (!hot.empty() && rng() % 3 == 0) {
      const auto& h = hot[rng() % hot.size()];
      const std::size_t span = h.second - h.first;
      start = h.first + (span > static_cast<std::size_t>(len) ? rng() % (span - static_cast<std::size_t>(len)) : 0);
      start = std::min(start, fwd.size() - static_cast<std::size_t>(len) - 8);
    }
    std::string s = fwd.substr(start, static_cast<std::size_t>(len) + 8);
    const int kind = static_cast<int>(rng() % 10);
    if (kind <= 2) {  // an insertion of 1-3 bases away from the ends
      const std::size_t at = 6 + rng() % static_cast<std::uint64_t>(len - 12);
      std::string ins;
      for (std::uint64_t j = 0, m = 1 + rng() % 3; j < m; ++j) ins += kB[rng() & 3];
      s.insert(at, ins);
    } else if (kind <= 5) {  // a deletion of 1-3 bases
      const std::size_t at = 6 + rng() % static_cast<std::uint64_t>(len - 12);
      s.erase(at, 1 + rng() % 3);
    }
    s.resize(static_cast<std::size_t>(len));
    for (std::uint64_t j = 0, m = rng() % 4; j < m; ++j) s[rng() % s.size()] = kB[rng() & 3];  // substitutions
    if (rng() % 20 == 0) s[rng() % s.size()] = 'N';
    if (rng() % 50 == 0) {  // random read
      for (auto& c : s) c = kB[rng() & 3];
    }
    if (rng() & 1) s = revcomp(s);
    std::string q(s.size(), 'I');
    for (auto& c : q) c = static_cast<char>('#' + rng() % 39);
    o << "@p" << i << "\n" << s << "\n+\n" << q << "\n";
  }
  write_file(out, o.str());
}

namespace {
std::string mutate(std::string s, std::mt19937_64& rng, int subs, bool indel) {
  static const char kB[] = "ACGT";
  if (indel && s.size() > 30) {
    const std::size_t at = 8 + rng() % (s.size() - 16);
    if (rng() & 1) s.insert(at, std::string(1 + rng() % 2, kB[rng() & 3]));
    else s.erase(at, 1 + rng() % 2);
  }
  for (int j = 0; j < subs; ++j) s[rng() % s.size()] = kB[rng() & 3];
  return s;
}
}  // namespace

void planted_pairs(const std::string& fasta, const std::filesystem::path& out_prefix, int n, int len, int frag,
                   std::uint64_t seed, const std::vector<std::pair<std::size_t, std::size_t>>& hot) {
  std::string fwd;
  for (const auto& s : bc::read_reference(fasta))
    for (char c : s.seq) fwd += "ACGTN"[bc::base_code(c)];
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> fd(frag, frag / 10.0);
  std::ostringstream o1, o2;
  static const char kB[] = "ACGT";
  auto pick = [&](std::size_t span) {
    std::size_t start = rng() % (fwd.size() - span - 4);
    if (!hot.empty() && rng() % 4 == 0) {
      const auto& h = hot[rng() % hot.size()];
      start = std::min(h.first + rng() % (h.second - h.first), fwd.size() - span - 4);
    }
    return start;
  };
  for (int i = 0; i < n; ++i) {
    const std::size_t f = static_cast<std::size_t>(std::max<double>(len + 10, fd(rng)));
    const std::size_t start = pick(f);
    std::string a = fwd.substr(start, static_cast<std::size_t>(len));
    std::string b = revcomp(fwd.substr(start + f - static_cast<std::size_t>(len), static_cast<std::size_t>(len)));
    const int kind = static_cast<int>(rng() % 100);
    if (kind < 4) b = revcomp(fwd.substr(pick(static_cast<std::size_t>(len)), static_cast<std::size_t>(len)));  // discordant
    a = mutate(a, rng, static_cast<int>(rng() % 3), rng() % 8 == 0);
    b = mutate(b, rng, static_cast<int>(rng() % 3), rng() % 8 == 0);
    if (kind >= 4 && kind < 12) {  // one end beyond aln's reach: 9 substitutions spread over it
      std::string& x = (rng() & 1) ? a : b;
      for (int j = 0; j < 9; ++j) x[static_cast<std::size_t>(j) * x.size() / 9 + rng() % (x.size() / 9)] = kB[rng() & 3];
    } else if (kind >= 12 && kind < 15) {  // one end random
      for (auto& c : ((rng() & 1) ? a : b)) c = kB[rng() & 3];
    }
    if (rng() % 30 == 0) a[rng() % a.size()] = 'N';
    if (rng() & 1) std::swap(a, b);  // either end first
    auto q = [&](const std::string& s) {
      std::string qq(s.size(), 'I');
      for (auto& c : qq) c = static_cast<char>('#' + rng() % 39);
      return qq;
    };
    o1 << "@q" << i << "/1\n" << a << "\n+\n" << q(a) << "\n";
    o2 << "@q" << i << "/2\n" << b << "\n+\n" << q(b) << "\n";
  }
  write_file(out_prefix.string() + "1.fq", o1.str());
  write_file(out_prefix.string() + "2.fq", o2.str());
}

}  // namespace bct

#include "test_util.hpp"

#include <fstream>
#include <sstream>

#include "evk_testing.hpp"

namespace bct {

bool have(const std::string& program) { return evk::testing::run("command -v " + program).exit_code == 0; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream o;
  o << in.rdbuf();
  return o.str();
}

void write_file(const std::filesystem::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
}

std::string random_dna(std::mt19937_64& rng, std::size_t n) {
  static const char kB[] = "ACGT";
  std::string s(n, 'A');
  for (auto& c : s) c = kB[rng() & 3];
  return s;
}

std::string revcomp(const std::string& s) {
  std::string r(s.rbegin(), s.rend());
  for (auto& c : r) {
    switch (c) {
      case 'A': c = 'T'; break;
      case 'C': c = 'G'; break;
      case 'G': c = 'C'; break;
      case 'T': c = 'A'; break;
      default: c = 'N';
    }
  }
  return r;
}

void write_fasta(const std::filesystem::path& p, const std::vector<evk::barracuda_exact::RefSeq>& ref) {
  std::ofstream out(p);
  for (const auto& r : ref) {
    out << '>' << r.name;
    if (!r.comment.empty()) out << ' ' << r.comment;
    out << '\n';
    for (std::size_t i = 0; i < r.seq.size(); i += 60) out << r.seq.substr(i, 60) << '\n';
  }
}

std::vector<evk::barracuda_exact::RefSeq> tricky_reference(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<evk::barracuda_exact::RefSeq> ref(3);
  ref[0] = {"chrA", "first contig", random_dna(rng, 20000)};
  ref[1] = {"chrB", "", random_dna(rng, 7001)};
  ref[2] = {"chrC", "x y", random_dna(rng, 3003)};
  const std::string rep = random_dna(rng, 150);
  ref[0].seq.replace(1000, 150, rep);
  ref[0].seq.replace(9000, 150, revcomp(rep));
  ref[1].seq.replace(2000, 150, rep);
  ref[2].seq.replace(500, 150, rep);
  const std::string rep2 = random_dna(rng, 120);  // many copies: more than bwa's XA limit
  for (int i = 0; i < 7; ++i) ref[0].seq.replace(12000 + 400 * static_cast<std::size_t>(i), 120, rep2);
  ref[0].seq.replace(5000, 30, std::string(30, 'N'));
  ref[0].seq.replace(5100, 3, "RYK");
  ref[1].seq.replace(100, 5, "nnnnn");
  ref[1].seq.replace(7001 - 4, 4, "acgt");  // lowercase at the contig end
  ref[2].seq.replace(0, 2, "MW");
  return ref;
}

std::vector<std::vector<std::string>> sam_records(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '@') continue;
    std::vector<std::string> f;
    std::size_t s = 0;
    for (;;) {
      const std::size_t t = line.find('\t', s);
      f.push_back(line.substr(s, t == std::string::npos ? std::string::npos : t - s));
      if (t == std::string::npos) break;
      s = t + 1;
    }
    out.push_back(std::move(f));
  }
  return out;
}

int temp_files_in(const std::filesystem::path& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) ++n;
  return n;
}

}  // namespace bct

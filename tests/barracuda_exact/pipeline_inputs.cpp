#include "pipeline_inputs.hpp"

#include <gtest/gtest.h>
#include <htslib/bgzf.h>

#include <random>
#include <sstream>

#include "test_util.hpp"

namespace bct {

std::string forward_text(const evk::barracuda_exact::BwtIndex& idx) {
  std::string f;
  for (std::int64_t i = 0; i < idx.l_pac; ++i) f += "ACGT"[idx.pac_base(i)];
  return f;
}

std::string varied_reads(const std::string& fwd, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ostringstream o;
  const bool fasta = seed % 6 == 5;  // one format per file (read_rules.hpp)
  o << "\n\n";                      // blank lines before the first record are allowed
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t len = !fasta && rng() % 23 == 0 ? 0 : 1 + rng() % 300;  // a FASTA record has bases
    std::string s;
    switch (rng() % 6) {
      case 0: s = random_dna(rng, len); break;
      case 1: s = revcomp(fwd.substr(rng() % (fwd.size() - len), len)); break;
      case 2:
        s = fwd.substr(rng() % (fwd.size() - len), len);
        if (len) s[rng() % len] = "NnRY"[rng() % 4];
        break;
      case 3:
        s = fwd.substr(rng() % (fwd.size() - len), len);
        for (auto& c : s) c = static_cast<char>(std::tolower(c));
        break;
      default: s = fwd.substr(rng() % (fwd.size() - len), len);
    }
    const bool crlf = rng() % 5 == 0, wrap = rng() % 4 == 0;
    // an empty read's lines with CRLF would be a lone '\r', which kseq keeps as the sequence (refused)
    const char* eol = crlf && !s.empty() ? "\r\n" : "\n";
    std::string name = "r" + std::to_string(i);
    if (rng() % 5 == 0) name += (rng() & 1) ? "/1" : "/2";
    o << (fasta ? '>' : '@') << name;
    if (rng() % 4 == 0) o << ((rng() & 1) ? " " : "\t") << "comment " << i;
    o << eol;
    const std::size_t width = 1 + rng() % 70;
    auto lines = [&](const std::string& x) {
      if (!wrap) {
        o << x << eol;
        return;
      }
      for (std::size_t p = 0; p < x.size(); p += width) o << x.substr(p, width) << eol;
      if (x.empty()) o << eol;
    };
    lines(s);
    if (!fasta) {
      o << '+' << (rng() % 3 == 0 ? name : "") << eol;
      std::string q(s.size(), 'I');
      for (auto& c : q) c = static_cast<char>('!' + rng() % 41);  // includes '@' and '+'
      lines(q);
    }
    if (rng() % 9 == 0) o << eol;  // blank line between records
  }
  return o.str();
}

std::string gzip_text(const evk::testing::TempDir& dir, const std::string& text) {
  write_file(dir / "gz.in", text);
  auto r = evk::testing::run("gzip -c -n " + (dir / "gz.in").string());
  EXPECT_EQ(r.exit_code, 0);
  return r.out;
}

std::string multi_member_gzip(const evk::testing::TempDir& dir, const std::string& text, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out;
  std::size_t p = 0;
  for (int m = 0; p < text.size(); ++m) {
    const std::size_t n = m == 2 ? 0 : std::min(text.size() - p, 1 + rng() % (text.size() / 3 + 1));
    out += gzip_text(dir, text.substr(p, n));
    p += n;
  }
  return out;
}

bool write_bgzf(const std::filesystem::path& p, const std::string& text) {
  BGZF* f = bgzf_open(p.c_str(), "w");
  if (!f) return false;
  const bool ok = bgzf_write(f, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return bgzf_close(f) == 0 && ok;
}

}  // namespace bct

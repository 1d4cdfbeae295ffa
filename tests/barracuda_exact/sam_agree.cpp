#include "sam_agree.hpp"

#include <cstdio>
#include <set>
#include <sstream>

namespace bct {

namespace {

using Rec = std::vector<std::string>;

std::vector<Rec> records(const std::string& text) {
  std::vector<Rec> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '@') continue;
    Rec f;
    std::size_t s = 0;
    for (;;) {
      const std::size_t t = line.find('\t', s);
      f.push_back(line.substr(s, t == std::string::npos ? std::string::npos : t - s));
      if (t == std::string::npos) break;
      s = t + 1;
    }
    while (f.size() < 11) f.emplace_back();
    out.push_back(std::move(f));
  }
  return out;
}

std::string tag(const Rec& f, const std::string& name) {
  for (std::size_t i = 11; i < f.size(); ++i)
    if (f[i].size() > 5 && f[i].compare(0, 3, name + ":") == 0) return f[i].substr(5);
  return "";
}

const char* kFields[11] = {"QNAME", "FLAG", "RNAME", "POS", "MAPQ", "CIGAR", "RNEXT", "PNEXT", "TLEN", "SEQ", "QUAL"};

// "name,+pos" of the primary hit and of every XA alternative of a record.
std::set<std::string> hit_set(const Rec& f) {
  std::set<std::string> s;
  const int flag = std::stoi(f[1]);
  s.insert(f[2] + "," + ((flag & 16) ? "-" : "+") + f[3]);
  std::istringstream xa(tag(f, "XA"));
  std::string e;
  while (std::getline(xa, e, ';')) {
    if (e.empty()) continue;
    const auto c1 = e.find(','), c2 = e.find(',', c1 + 1);
    s.insert(e.substr(0, c1) + "," + e.substr(c1 + 1, c2 - c1 - 1));
  }
  return s;
}

}  // namespace

Agreement sam_agree(const std::string& ours, const std::string& theirs, const std::map<std::string, std::string>& ref) {
  Agreement a;
  const auto x = records(ours), y = records(theirs);
  if (x.size() != y.size()) {
    a.error = "record counts differ: ours " + std::to_string(x.size()) + ", bwa " + std::to_string(y.size());
    return a;
  }
  a.records = x.size();
  std::vector<int> state(x.size(), 0);  // 0 identical, 1 tie, 2 unexplained, 3 mate fields only
  std::vector<std::string> what(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Rec &o = x[i], &b = y[i];
    if (o[0] != b[0]) {
      a.error = "record " + std::to_string(i + 1) + ": names differ (" + o[0] + " vs " + b[0] + ")";
      return a;
    }
    std::vector<std::string> diff;
    bool core_same = true, only_hit_fields = true, only_mate_fields = true;
    for (int k = 1; k < 11; ++k) {
      if (o[k] == b[k]) continue;
      diff.push_back(kFields[k]);
      ++a.by_field[kFields[k]];
      if (k == 1 || k == 2 || k == 3 || k == 4 || k == 5) core_same = false;
      if (k == 4 || k == 5) only_hit_fields = false;
      if (k == 1) {
        const int d = std::stoi(o[1]) ^ std::stoi(b[1]);
        if (d & ~(16 | 32)) only_hit_fields = false;
        if (d & ~32) only_mate_fields = false;
      } else if (k != 6 && k != 7 && k != 8) {
        only_mate_fields = false;
      }
    }
    const std::vector<std::string> to(o.begin() + 11, o.end()), tb(b.begin() + 11, b.end());
    if (to != tb) {
      core_same = false;
      only_mate_fields = false;
      std::set<std::string> so(to.begin(), to.end()), sb(tb.begin(), tb.end());
      for (const auto& t : so)
        if (!sb.count(t)) {
          diff.push_back(t.substr(0, 2));
          ++a.by_field[t.substr(0, 2)];
          if (t.compare(0, 2, "MD") != 0 && t.compare(0, 2, "XA") != 0) only_hit_fields = false;
        }
      for (const auto& t : sb)
        if (!so.count(t) && t.compare(0, 2, "MD") != 0 && t.compare(0, 2, "XA") != 0) only_hit_fields = false;
      if (so == sb) {  // same tags in another order
        diff.push_back("tag order");
        ++a.by_field["tag order"];
        only_hit_fields = false;
      }
    }
    if (diff.empty()) {
      ++a.identical;
      ++a.core_identical;
      continue;
    }
    if (core_same) ++a.core_identical;
    std::string d;
    for (const auto& s : diff) d += (d.empty() ? "" : ",") + s;
    what[i] = d;
    const std::string x0 = tag(b, "X0");
    bool tie = false;
    if (only_hit_fields && !x0.empty() && std::stoll(x0) > 1) {
      const std::string mine = o[2] + "," + ((std::stoi(o[1]) & 16) ? "-" : "+") + o[3];
      tie = hit_set(b).count(mine) > 0;
      if (!tie && ref.count(o[2]) && o[5].find_first_not_of("0123456789M") == std::string::npos) {
        const std::string& c = ref.at(o[2]);
        const std::size_t pos = std::stoul(o[3]) - 1, n = o[9].size();
        const std::string& read = o[9];  // SEQ is on the forward strand
        if (pos + n <= c.size()) {  // as many differences against the reference as bwa's hit
          int mm = 0;
          for (std::size_t j = 0; j < n; ++j) mm += c[pos + j] != read[j];
          tie = std::to_string(mm) == tag(b, "NM");
        }
      }
    }
    state[i] = tie ? 1 : only_mate_fields ? 3 : 2;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (state[i] == 0) continue;
    if (state[i] == 3) {  // only the mate's fields differ: explained when the mate is a tie
      const std::size_t m = i ^ 1;
      state[i] = m < x.size() && x[m][0] == x[i][0] && state[m] == 1 ? 1 : 2;
    }
    if (state[i] == 1) ++a.ties;
    else ++a.unexplained;
    a.listing.push_back(std::string(state[i] == 1 ? "tie " : "UNEXPLAINED ") + "record " + std::to_string(i + 1) + " " +
                        x[i][0] + ": " + what[i] + "\n  ours: " + x[i][1] + " " + x[i][2] + ":" + x[i][3] + " " + x[i][5] +
                        " MAPQ " + x[i][4] + " " + x[i][6] + ":" + x[i][7] + " " + x[i][8] + " X0 " + tag(x[i], "X0") +
                        " MD " + tag(x[i], "MD") + " XA " + tag(x[i], "XA") + "\n  bwa:  " + y[i][1] + " " + y[i][2] + ":" +
                        y[i][3] + " " + y[i][5] + " MAPQ " + y[i][4] + " " + y[i][6] + ":" + y[i][7] + " " + y[i][8] +
                        " X0 " + tag(y[i], "X0") + " MD " + tag(y[i], "MD") + " XA " + tag(y[i], "XA"));
  }
  return a;
}

std::string agreement_row(const std::string& label, const Agreement& a) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "| %s | %zu | %zu (%.3f%%) | %zu (%.3f%%) | %zu | %zu |", label.c_str(), a.records,
                a.identical, a.identical_pct(), a.core_identical, a.core_pct(), a.ties, a.unexplained);
  return buf;
}

}  // namespace bct

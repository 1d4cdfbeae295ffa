#include "io/index_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/base_counts.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact {
namespace {

// Every stored occurrence count must be the count of the bases before its block: the search and
// the SA walk index arrays with them (a damaged .bwt whose header and size are right must not lead
// them out of bounds). Each block is checked against the next one's counts, blocks in parallel.
void check_occ(const std::string& path, const BwtIndex& idx) {
  const std::uint64_t blocks = (idx.seq_len + kOccInterval - 1) / kOccInterval;
  auto counts = [&](std::uint64_t b, std::uint64_t c) {  // the stored counts before block b (b == blocks: the last)
    const std::uint32_t* p = b < blocks ? idx.occ.data() + b * kBlockWords : idx.occ.data() + idx.occ.size() - 8;
    std::uint64_t v;
    std::memcpy(&v, p + 2 * c, 8);
    return v;
  };
  for (int c = 0; c < 4; ++c)
    if (counts(0, static_cast<std::uint64_t>(c)) != 0) input_error(path, "corrupt: occurrence counts of block 0 are not zero");
  std::atomic<std::uint64_t> bad{~0ull};
  parallel_for(static_cast<std::size_t>(blocks), [&](std::size_t from, std::size_t to) {
    for (std::uint64_t b = from; b < to; ++b) {
      const std::uint32_t* p = idx.occ.data() + b * kBlockWords;
      std::uint64_t cnt[4];
      for (int c = 0; c < 4; ++c) cnt[c] = counts(b, static_cast<std::uint64_t>(c));
      const std::uint64_t first = b * kOccInterval, n = std::min<std::uint64_t>(kOccInterval, idx.seq_len - first);
      std::uint32_t packed = 0;  // at most 8 words (128 bases) a block: within a field
      for (std::uint64_t w = 0; w * 16 < n; ++w) {
        const std::uint32_t word = p[8 + w];
        const unsigned fields = static_cast<unsigned>(std::min<std::uint64_t>(16, n - w * 16));
        if (fields == 16) {
          packed += count4_packed(word);
        } else {
          for (unsigned f = 0; f < fields; ++f) ++cnt[word >> ((15 - f) << 1) & 3];
        }
      }
      for (int c = 0; c < 4; ++c) cnt[c] += count_field(packed, c);
      for (int c = 0; c < 4; ++c)
        if (cnt[c] != counts(b + 1, static_cast<std::uint64_t>(c))) {
          std::uint64_t seen = bad.load();
          while (b + 1 < seen && !bad.compare_exchange_weak(seen, b + 1)) {
          }
        }
    }
  });
  if (bad.load() != ~0ull)
    input_error(path, "corrupt: occurrence counts of block " + std::to_string(bad.load()) + " disagree with its bases");
}

// Opens a binary index file; its size in bytes.
std::ifstream open_in(const std::string& path, std::uint64_t& size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) input_error(path, std::string("cannot open: ") + std::strerror(errno) + " (build it with `index`)");
  in.seekg(0, std::ios::end);
  size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  return in;
}
void read_exactly(std::ifstream& in, const std::string& path, void* to, std::uint64_t n) {
  if (n && !in.read(static_cast<char*>(to), static_cast<std::streamsize>(n))) input_error(path, "read error (truncated?)");
}

// n bytes at `offset` of the file into `to` (fresh, unwritten pages: IndexArray), in 16 MiB pieces on
// every core: the first touch of the pages and the copies out of the page cache of a human-sized
// index (5.4 GB) are spread over the threads rather than a serial zero fill and read.
void read_body(const std::string& path, std::uint64_t offset, void* to, std::uint64_t n) {
  if (n == 0) return;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) input_error(path, std::string("cannot open: ") + std::strerror(errno));
  constexpr std::uint64_t kPiece = std::uint64_t{16} << 20;
  std::atomic<bool> failed{false};
  parallel_for(static_cast<std::size_t>((n + kPiece - 1) / kPiece), [&](std::size_t from, std::size_t end) {
    for (std::uint64_t p = from; p < end && !failed; ++p) {
      char* at = static_cast<char*>(to) + p * kPiece;
      const std::uint64_t want = std::min(kPiece, n - p * kPiece);
      for (std::uint64_t done = 0; done < want;) {
        const ssize_t got = ::pread(fd, at + done, want - done, static_cast<off_t>(offset + p * kPiece + done));
        if (got <= 0) {
          failed = true;
          break;
        }
        done += static_cast<std::uint64_t>(got);
      }
    }
  });
  ::close(fd);
  if (failed) input_error(path, "read error (truncated?)");
}

void read_bwt(const std::string& path, BwtIndex& idx) {
  std::uint64_t size = 0;
  std::ifstream in = open_in(path, size);
  if (size < 40 || (size - 40) % 4 != 0) input_error(path, "truncated or not a bwa .bwt file");
  std::uint64_t head[5];
  read_exactly(in, path, head, sizeof head);
  idx.primary = head[0];
  idx.L2[0] = 0;
  for (int c = 1; c <= 4; ++c) idx.L2[c] = head[c];
  idx.seq_len = idx.L2[4];
  for (int c = 1; c <= 4; ++c)
    if (idx.L2[c] < idx.L2[c - 1]) input_error(path, "corrupt header (base counts decrease)");
  if (idx.seq_len == 0 || idx.seq_len % 2 != 0 || idx.seq_len > (1ull << 42) || idx.primary > idx.seq_len)
    input_error(path, "corrupt header (primary/length)");
  const std::uint64_t words = (size - 40) / 4;
  if (words != occ_words(idx.seq_len))
    input_error(path, "truncated or inconsistent: " + std::to_string(words) + " words for a BWT of " +
                          std::to_string(idx.seq_len) + " bases (expected " + std::to_string(occ_words(idx.seq_len)) + ")");
  idx.occ.resize(words);
  read_body(path, 40, idx.occ.data(), words * 4);
  const std::uint32_t* last = idx.occ.data() + words - 8;
  for (int c = 0; c < 4; ++c) {
    std::uint64_t v;
    std::memcpy(&v, last + 2 * c, 8);
    if (v != idx.L2[c + 1] - idx.L2[c]) input_error(path, "corrupt: final occurrence counts disagree with the header");
  }
  check_occ(path, idx);
}

void read_sa(const std::string& path, BwtIndex& idx) {
  std::uint64_t size = 0;
  std::ifstream in = open_in(path, size);
  if (size < 56 || size % 8 != 0) input_error(path, "truncated or not a bwa .sa file");
  std::uint64_t head[7];
  read_exactly(in, path, head, sizeof head);
  if (head[0] != idx.primary) input_error(path, "primary differs from the .bwt (index files of different references?)");
  for (int c = 1; c <= 4; ++c)
    if (head[c] != idx.L2[c]) input_error(path, "base counts differ from the .bwt");
  idx.sa_intv = head[5];
  if (idx.sa_intv == 0 || (idx.sa_intv & (idx.sa_intv - 1)) != 0) input_error(path, "SA interval is not a power of 2");
  if (head[6] != idx.seq_len) input_error(path, "sequence length differs from the .bwt");
  const std::uint64_t n_sa = (idx.seq_len + idx.sa_intv) / idx.sa_intv;
  if ((size - 56) / 8 != n_sa - 1)
    input_error(path, "truncated or inconsistent: " + std::to_string((size - 56) / 8) + " samples, expected " +
                          std::to_string(n_sa - 1));
  idx.sa.resize(n_sa);
  idx.sa[0] = ~0ull;
  read_body(path, 56, idx.sa.data() + 1, (n_sa - 1) * 8);
  std::atomic<bool> beyond{false};
  parallel_for(static_cast<std::size_t>(n_sa - 1), [&](std::size_t from, std::size_t to) {
    std::uint64_t top = 0;
    for (std::size_t j = from; j < to; ++j) top = std::max(top, idx.sa[j + 1]);
    if (top >= idx.seq_len) beyond = true;
  });
  if (beyond) input_error(path, "corrupt: SA value beyond the text");
}

// The first line of a .ann: "l_pac n_seqs seed".
void read_ann_header(std::istream& in, const std::string& path, long long& l_pac, long long& n_seqs, unsigned& seed) {
  std::string line;
  if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %lld %u", &l_pac, &n_seqs, &seed) != 3 || n_seqs <= 0 ||
      l_pac <= 0)
    input_error(path, "not a bwa .ann file (bad first line)");
}

void read_ann(const std::string& path, BwtIndex& idx) {
  std::ifstream in(path);
  if (!in) input_error(path, std::string("cannot open: ") + std::strerror(errno) + " (build it with `index`)");
  long long l_pac = 0;
  long long n_seqs = 0;
  unsigned seed = 0;
  std::string line;
  read_ann_header(in, path, l_pac, n_seqs, seed);
  idx.l_pac = l_pac;
  idx.seed = seed;
  if (static_cast<std::uint64_t>(l_pac) * 2 != idx.seq_len)
    input_error(path, "reference length " + std::to_string(l_pac) + " does not match the .bwt (" +
                          std::to_string(idx.seq_len / 2) + "): index files of different references?");
  std::int64_t next = 0;
  for (long long i = 0; i < n_seqs; ++i) {
    Contig c;
    if (!std::getline(in, line)) input_error(path, "truncated (contig " + std::to_string(i + 1) + ")");
    std::istringstream ls(line);
    if (!(ls >> c.gi >> c.name)) input_error(path, "bad name line for contig " + std::to_string(i + 1));
    std::getline(ls, c.anno);
    if (!c.anno.empty() && c.anno[0] == ' ') c.anno.erase(0, 1);
    long long off = 0;
    int len = 0, n_ambs = 0;
    if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %d %d", &off, &len, &n_ambs) != 3)
      input_error(path, "truncated or bad offset line for contig " + c.name);
    c.offset = off;
    c.len = len;
    c.n_ambs = n_ambs;
    if (off != next || len < 0) input_error(path, "contig " + c.name + " offset/length inconsistent");
    next = off + len;
    idx.contigs.push_back(c);
  }
  if (next != idx.l_pac) input_error(path, "contig lengths do not add up to the reference length");
}

void read_amb(const std::string& path, BwtIndex& idx) {
  std::ifstream in(path);
  if (!in) input_error(path, std::string("cannot open: ") + std::strerror(errno) + " (build it with `index`)");
  long long l_pac = 0, n_seqs = 0, n_holes = 0;
  std::string line;
  if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %lld %lld", &l_pac, &n_seqs, &n_holes) != 3)
    input_error(path, "not a bwa .amb file (bad first line)");
  if (l_pac != idx.l_pac || n_seqs != static_cast<long long>(idx.contigs.size()))
    input_error(path, "disagrees with the .ann (index files of different references?)");
  std::int64_t prev_end = 0;
  for (long long i = 0; i < n_holes; ++i) {
    Hole h;
    long long off = 0;
    char c = 0;
    if (!std::getline(in, line) || std::sscanf(line.c_str(), "%lld %d %c", &off, &h.len, &c) != 3)
      input_error(path, "truncated at hole " + std::to_string(i + 1));
    h.offset = off;
    h.amb = c;
    if (off < prev_end || h.len <= 0 || off > idx.l_pac - h.len) input_error(path, "hole " + std::to_string(i + 1) + " out of order or range");
    prev_end = off + h.len;
    idx.holes.push_back(h);
  }
}

void read_pac(const std::string& path, BwtIndex& idx) {
  std::uint64_t size = 0;
  std::ifstream in = open_in(path, size);
  const std::uint64_t body = static_cast<std::uint64_t>((idx.l_pac >> 2) + ((idx.l_pac & 3) ? 1 : 0));
  const std::uint64_t expect = body + ((idx.l_pac & 3) == 0 ? 1 : 0) + 1;
  if (size == expect) {
    idx.pac.resize(static_cast<std::size_t>(expect));
    read_body(path, 0, idx.pac.data(), expect);
  }
  if (size != expect || idx.pac.back() != idx.l_pac % 4)
    input_error(path, "truncated or inconsistent with the .ann (" + std::to_string(size) + " bytes, expected " +
                          std::to_string(expect) + ")");
  idx.pac.resize(static_cast<std::size_t>((idx.l_pac + 3) / 4));
  // the base counts of forward + reverse complement must be the BWT's (whole bytes in parallel)
  const std::uint64_t whole = static_cast<std::uint64_t>(idx.l_pac) / 4;
  std::mutex m;
  std::uint64_t cnt[4] = {0, 0, 0, 0};
  parallel_for(static_cast<std::size_t>(whole), [&](std::size_t from, std::size_t to) {
    std::uint64_t local[4] = {0, 0, 0, 0};
    for (std::size_t i = from; i < to;) {
      std::uint32_t packed = 0;  // 63 bytes: at most 252 of a base, within a field
      const std::size_t end = std::min(to, i + 63);
      for (; i < end; ++i) packed += kBaseCounts[idx.pac[i]];
      for (int c = 0; c < 4; ++c) local[c] += count_field(packed, c);
    }
    const std::lock_guard<std::mutex> g(m);
    for (int c = 0; c < 4; ++c) cnt[c] += local[c];
  });
  for (std::int64_t i = static_cast<std::int64_t>(whole) * 4; i < idx.l_pac; ++i) ++cnt[idx.pac_base(i)];
  for (int c = 0; c < 4; ++c)
    if (cnt[c] + cnt[3 - c] != idx.L2[c + 1] - idx.L2[c])
      input_error(path, "base counts disagree with the .bwt (index files of different references?)");
}

// The BWT character of row r must be the text character before SA[r]: checked on sampled rows.
void cross_check_sa(const std::string& path, const BwtIndex& idx) {
  const std::uint64_t n_sa = idx.sa.size();
  const std::uint64_t step = std::max<std::uint64_t>(1, n_sa / 64);
  for (std::uint64_t j = 1; j < n_sa; j += step) {
    const std::uint64_t row = j * idx.sa_intv, s = idx.sa[j];
    if (row == idx.primary) {
      if (s != 0) input_error(path, "disagrees with the .bwt");
      continue;
    }
    if (s == 0) input_error(path, "disagrees with the .bwt");
    const std::uint64_t bp = row - (row > idx.primary);
    const int bwt_c = static_cast<int>(idx.occ[(bp >> 7 << 4) + 8 + ((bp & 127) >> 4)] >> ((~bp & 15) << 1) & 3);
    const std::int64_t t = static_cast<std::int64_t>(s - 1);
    const int text_c = t < idx.l_pac ? idx.pac_base(t) : 3 - idx.pac_base(2 * idx.l_pac - 1 - t);
    if (bwt_c != text_c) input_error(path, "disagrees with the .bwt/.pac (index files of different references?)");
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_out(const AtomicOutput& o) {
  File f(std::fopen(o.temp_path().c_str(), "wb"));
  if (!f) input_error(o.target().string(), std::string("cannot write: ") + std::strerror(errno));
  return f;
}
void put(std::FILE* f, const void* p, std::size_t n, const AtomicOutput& o) {
  if (n && std::fwrite(p, 1, n, f) != n) input_error(o.target().string(), "write failed (disk full?)");
}
void finish(File& f, const AtomicOutput& o) {
  if (std::fclose(f.release()) != 0) input_error(o.target().string(), "write failed (disk full?)");
}

}  // namespace

long long read_reference_length(const std::string& prefix) {
  const std::string path = prefix + ".ann";
  std::ifstream in(path);
  if (!in) input_error(path, std::string("cannot open: ") + std::strerror(errno) + " (build it with `index`)");
  long long l_pac = 0, n_seqs = 0;
  unsigned seed = 0;
  read_ann_header(in, path, l_pac, n_seqs, seed);
  return l_pac;
}

BwtIndex read_index(const std::string& prefix) {
  BwtIndex idx;
  read_bwt(prefix + ".bwt", idx);
  read_sa(prefix + ".sa", idx);
  read_ann(prefix + ".ann", idx);
  read_amb(prefix + ".amb", idx);
  read_pac(prefix + ".pac", idx);
  cross_check_sa(prefix + ".sa", idx);
  return idx;
}

void write_index(const BwtIndex& idx, const std::string& prefix) {
  AtomicOutput bwt(prefix + ".bwt"), sa(prefix + ".sa"), pac(prefix + ".pac"), ann(prefix + ".ann"), amb(prefix + ".amb");
  {
    File f = open_out(bwt);
    put(f.get(), &idx.primary, 8, bwt);
    put(f.get(), idx.L2 + 1, 32, bwt);
    put(f.get(), idx.occ.data(), idx.occ.size() * 4, bwt);
    finish(f, bwt);
  }
  {
    File f = open_out(sa);
    put(f.get(), &idx.primary, 8, sa);
    put(f.get(), idx.L2 + 1, 32, sa);
    put(f.get(), &idx.sa_intv, 8, sa);
    put(f.get(), &idx.seq_len, 8, sa);
    put(f.get(), idx.sa.data() + 1, (idx.sa.size() - 1) * 8, sa);
    finish(f, sa);
  }
  {
    File f = open_out(pac);
    put(f.get(), idx.pac.data(), idx.pac.size(), pac);
    const std::uint8_t zero = 0, rem = static_cast<std::uint8_t>(idx.l_pac % 4);
    if (idx.l_pac % 4 == 0) put(f.get(), &zero, 1, pac);
    put(f.get(), &rem, 1, pac);
    finish(f, pac);
  }
  {
    File f = open_out(ann);
    std::fprintf(f.get(), "%lld %d %u\n", static_cast<long long>(idx.l_pac), static_cast<int>(idx.contigs.size()), idx.seed);
    for (const auto& c : idx.contigs) {
      std::fprintf(f.get(), "%u %s", c.gi, c.name.c_str());
      if (!c.anno.empty()) std::fprintf(f.get(), " %s", c.anno.c_str());
      std::fprintf(f.get(), "\n%lld %d %d\n", static_cast<long long>(c.offset), c.len, c.n_ambs);
    }
    finish(f, ann);
  }
  {
    File f = open_out(amb);
    std::fprintf(f.get(), "%lld %d %u\n", static_cast<long long>(idx.l_pac), static_cast<int>(idx.contigs.size()),
                 static_cast<unsigned>(idx.holes.size()));
    for (const auto& h : idx.holes) std::fprintf(f.get(), "%lld %d %c\n", static_cast<long long>(h.offset), h.len, h.amb);
    finish(f, amb);
  }
  bwt.commit();
  sa.commit();
  pac.commit();
  ann.commit();
  amb.commit();
}

}  // namespace evk::barracuda_exact

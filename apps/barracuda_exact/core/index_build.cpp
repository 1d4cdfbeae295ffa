// Builds bwa 0.7's index in memory: the same steps as `bwa index` (pack the FASTA with ambiguous
// bases replaced by drand48-style random bases seeded 11, BWT of forward + reverse complement,
// occurrence records every 128 positions, SA sampled every 32 rows), with the suffix array from
// libdivsufsort or the GPU sort (core/sa_gpu.hpp) instead of bwa's own sorters (a suffix array is
// unique, so the bytes are the same).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/index.hpp"
#include "core/rand48.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/sa_gpu.hpp"
#endif

extern "C" {
int divsufsort(const unsigned char* T, int* SA, int n);
int divsufsort64(const unsigned char* T, std::int64_t* SA, std::int64_t n);
}

namespace evk::barracuda_exact {
namespace {

// One part of the forward text for pack_reference: its ambiguous bases and runs.
struct PackPart {
  std::uint64_t begin = 0, end = 0, n_amb = 0;
  std::vector<Hole> holes;
  bool continues = false;  // its first run goes on from the previous part (same contig and character)
};

// Codes of part P (ambiguous bases as 4) and its runs; `last` as bwa's loop has it: the character
// before, in the same contig.
void pack_part(const std::vector<RefSeq>& ref, const std::vector<std::int64_t>& off, PackPart& P, std::uint8_t* codes) {
  static const std::array<std::uint8_t, 256> code = [] {  // base_code as a table (4: ambiguous)
    std::array<std::uint8_t, 256> t{};
    for (int c = 0; c < 256; ++c) t[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(std::min(base_code(static_cast<char>(c)), 4));
    return t;
  }();
  std::size_t k = static_cast<std::size_t>(std::upper_bound(off.begin(), off.end(), static_cast<std::int64_t>(P.begin)) - off.begin()) - 1;
  for (std::uint64_t p = P.begin; p < P.end; ++k) {
    const std::string& seq = ref[k].seq;
    const std::uint64_t from = p - static_cast<std::uint64_t>(off[k]);
    const std::uint64_t to = std::min<std::uint64_t>(seq.size(), P.end - static_cast<std::uint64_t>(off[k]));
    char last = from > 0 ? seq[from - 1] : 0;
    for (std::uint64_t i = from; i < to; ++i, ++p) {
      const char ch = seq[i];
      const std::uint8_t c = code[static_cast<unsigned char>(ch)];
      if (c == 4) {
        ++P.n_amb;
        if (last == ch && !P.holes.empty() && P.holes.back().offset + P.holes.back().len == static_cast<std::int64_t>(p)) {
          ++P.holes.back().len;
        } else if (last == ch && P.holes.empty() && p == P.begin) {
          P.continues = true;
          P.holes.push_back(Hole{static_cast<std::int64_t>(p), 1, ch});
        } else {
          P.holes.push_back(Hole{static_cast<std::int64_t>(p), 1, ch});
        }
      }
      last = ch;
      codes[p] = c;
    }
  }
}

// Packs the reference (forward strand) into 2-bit codes, recording contigs and holes as bwa does:
// ambiguous bases become lrand48() & 3 of one generator seeded idx.seed, in text order. In parallel
// parts: each part counts its ambiguous bases, then starts the generator that many draws on.
std::vector<std::uint8_t> pack_reference(const std::vector<RefSeq>& ref, BwtIndex& idx, int threads) {
  std::vector<std::int64_t> off;
  std::int64_t total = 0;
  for (const auto& r : ref) {
    off.push_back(total);
    total += static_cast<std::int64_t>(r.seq.size());
  }
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(total));
  const int t = threads > 0 ? threads : default_threads();
  const std::uint64_t step = std::max<std::uint64_t>(4096, static_cast<std::uint64_t>(total) / (8 * static_cast<std::uint64_t>(t)) + 1);
  std::vector<PackPart> parts;
  for (std::uint64_t b = 0; b < static_cast<std::uint64_t>(total); b += step)
    parts.push_back(PackPart{b, std::min<std::uint64_t>(b + step, static_cast<std::uint64_t>(total)), 0, {}, false});
  parallel_for(parts.size(), [&](std::size_t a, std::size_t e) {
    for (std::size_t j = a; j < e; ++j) pack_part(ref, off, parts[j], codes.data());
  }, t);
  std::uint64_t draws = 0;
  std::vector<std::uint64_t> first(parts.size());
  for (std::size_t j = 0; j < parts.size(); ++j) {
    first[j] = draws;
    draws += parts[j].n_amb;
  }
  parallel_for(parts.size(), [&](std::size_t a, std::size_t e) {
    for (std::size_t j = a; j < e; ++j) {
      if (parts[j].n_amb == 0) continue;
      Rand48 rng(idx.seed);
      rng.skip(first[j]);
      for (std::uint64_t p = parts[j].begin; p < parts[j].end; ++p)
        if (codes[p] == 4) codes[p] = static_cast<std::uint8_t>(rng.lrand() & 3);
    }
  }, t);
  for (PackPart& P : parts)
    for (std::size_t h = 0; h < P.holes.size(); ++h) {
      if (h == 0 && P.continues) idx.holes.back().len += P.holes[0].len;
      else idx.holes.push_back(P.holes[h]);
    }
  std::size_t h = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    Contig ct;
    ct.name = ref[k].name;
    ct.anno = ref[k].comment.empty() ? "(null)" : ref[k].comment;
    ct.offset = off[k];
    ct.len = static_cast<std::int32_t>(ref[k].seq.size());
    for (; h < idx.holes.size() && idx.holes[h].offset < off[k] + ct.len; ++h) ++ct.n_ambs;
    idx.contigs.push_back(ct);
  }
  idx.l_pac = total;
  idx.pac.assign(static_cast<std::size_t>((total + 3) / 4), 0);
  parallel_for(idx.pac.size(), [&](std::size_t a, std::size_t e) {
    for (std::size_t b = a; b < e; ++b) {
      std::uint8_t v = 0;
      for (std::size_t i = 4 * b; i < std::min<std::size_t>(4 * b + 4, codes.size()); ++i)
        v |= static_cast<std::uint8_t>(codes[i] << ((~i & 3) << 1));
      idx.pac[b] = v;
    }
  }, t);
  return codes;
}

// Both strands: the forward codes then their reverse complement.
void add_reverse_complement(std::vector<std::uint8_t>& text, int threads) {
  const std::size_t l = text.size();
  text.resize(2 * l);
  parallel_for(l, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) text[l + i] = static_cast<std::uint8_t>(3 - text[l - 1 - i]);
  }, threads);
}

// rows[r] (r = 1..n) = the BWT base of SA row r, 4 where the suffix is the whole text; samples of
// rows divisible by 32. sa[r - 1] is row r's suffix (divsufsort leaves out the row of '$').
template <class Idx>
void rows_from_sa(const std::vector<std::uint8_t>& text, const std::vector<Idx>& sa, std::uint8_t* rows,
                  std::uint64_t* samples, int threads) {
  parallel_for(sa.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      const auto s = static_cast<std::uint64_t>(sa[i]);
      const std::uint64_t row = i + 1;
      rows[row] = s == 0 ? 4 : text[s - 1];
      if (row % kSaInterval == 0) samples[row / kSaInterval] = s;
    }
  }, threads);
}

void sort_suffixes_cpu(const std::vector<std::uint8_t>& text, std::uint8_t* rows, std::uint64_t* samples, int threads) {
  const std::uint64_t n = text.size();
  if (n < static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    std::vector<int> sa(n);
    if (divsufsort(text.data(), sa.data(), static_cast<int>(n)) != 0) throw std::runtime_error("divsufsort failed");
    rows_from_sa(text, sa, rows, samples, threads);
  } else {
    std::vector<std::int64_t> sa(n);
    if (divsufsort64(text.data(), sa.data(), static_cast<std::int64_t>(n)) != 0)
      throw std::runtime_error("divsufsort64 failed");
    rows_from_sa(text, sa, rows, samples, threads);
  }
}

// bwa's .bwt body from the rows: the row holding 4 is the primary and is left out; every 128 bases
// a record of the four counts before it, then the bases 16 to a word, then the totals.
void occ_from_rows(const std::vector<std::uint8_t>& rows, BwtIndex& idx, int threads) {
  const std::uint64_t n = rows.size() - 1;
  const void* hit = std::memchr(rows.data() + 1, 4, n);
  if (!hit) throw std::logic_error("index: no row holds the whole text");
  idx.primary = static_cast<std::uint64_t>(static_cast<const std::uint8_t*>(hit) - rows.data());
  idx.seq_len = n;
  idx.occ.assign(occ_words(n), 0);
  const std::uint64_t blocks = (n + kOccInterval - 1) / kOccInterval;
  const int parts = std::max(1, threads > 0 ? threads : default_threads());
  const std::uint64_t per = (blocks + static_cast<std::uint64_t>(parts) - 1) / static_cast<std::uint64_t>(parts);
  auto row_of = [&](std::uint64_t bpos) { return rows[bpos < idx.primary ? bpos : bpos + 1]; };
  std::vector<std::array<std::uint64_t, 4>> counts(static_cast<std::size_t>(parts) + 1);
  parallel_for(static_cast<std::size_t>(parts), [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p) {
      std::array<std::uint64_t, 4> c{};
      const std::uint64_t e = std::min(n, (p + 1) * per * kOccInterval);
      for (std::uint64_t b = p * per * kOccInterval; b < e; ++b) ++c[row_of(b)];
      counts[p + 1] = c;
    }
  }, threads);
  for (std::size_t p = 1; p < counts.size(); ++p)
    for (int c = 0; c < 4; ++c) counts[p][c] += counts[p - 1][c];
  parallel_for(static_cast<std::size_t>(parts), [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p) {
      std::uint64_t cnt[4] = {counts[p][0], counts[p][1], counts[p][2], counts[p][3]};
      const std::uint64_t e = std::min(n, (p + 1) * per * kOccInterval);
      std::uint32_t* rec = nullptr;
      for (std::uint64_t b = p * per * kOccInterval; b < e; ++b) {
        if (b % kOccInterval == 0) {
          rec = idx.occ.data() + (b / kOccInterval) * kBlockWords;
          std::memcpy(rec, cnt, sizeof cnt);
        }
        const std::uint8_t c = row_of(b);
        rec[8 + (b & 127) / 16] |= static_cast<std::uint32_t>(c) << ((15 - (b & 15)) << 1);
        ++cnt[c];
      }
    }
  }, threads);
  const auto& total = counts.back();
  std::memcpy(idx.occ.data() + idx.occ.size() - 8, total.data(), sizeof(std::uint64_t) * 4);
  idx.L2[0] = 0;
  for (int c = 0; c < 4; ++c) idx.L2[c + 1] = idx.L2[c] + total[static_cast<std::size_t>(c)];
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The GPU sort into rows/samples; false (with the reason in the report) when a GPU has no room.
bool sort_suffixes_on_gpus(const std::vector<std::uint8_t>& text, std::uint8_t* rows, std::uint64_t* samples,
                           const IndexOptions& opt, IndexReport& rep) {
#if defined(EVK_HAVE_CUDA)
  SaGpuOptions go;
  go.devices = opt.devices;
  go.memory_cap = opt.gpu_memory;
  go.check_order = opt.check_order;
  if (opt.progress)
    go.progress = [&](std::uint64_t placed, std::uint64_t total) { opt.progress("sort", double(placed) / double(total)); };
  try {
    const SaGpuReport g = sort_suffixes_gpu(text.data(), text.size(), rows, samples, go);
    rep.batches = g.batches;
    rep.max_rounds = g.max_rounds;
    rep.resorted = g.resorted;
    rep.doubled = g.doubled;
    rep.doubling_steps = g.doubling_steps;
    rep.checked = g.checked;
    rep.disorders = g.disorders;
    for (const auto& d : g.devices) rep.gpus.push_back({d.device, d.name, d.peak_bytes, d.batches, d.suffixes, d.seconds});
    return true;
  } catch (const SaGpuNoRoom& e) {
    rep.fallback = e.what();
    return false;
  }
#else
  (void)text, (void)rows, (void)samples, (void)opt;
  rep.fallback = "this build has no CUDA";
  return false;
#endif
}

}  // namespace

void check_bwa_limits(const std::vector<RefSeq>& ref, std::uint64_t max_bases) {
  for (const RefSeq& r : ref)
    if (r.seq.size() > max_bases)
      throw InputError("contig " + r.name + " has " + std::to_string(r.seq.size()) + " bases, over bwa's limit of " +
                       std::to_string(max_bases) + " per contig");
}

BwtIndex build_index(const std::vector<RefSeq>& ref, const IndexOptions& opt, IndexReport* report) {
  check_bwa_limits(ref);
  IndexReport local;
  IndexReport& rep = report ? *report : local;
  auto t = std::chrono::steady_clock::now();
  BwtIndex idx;
  std::vector<std::uint8_t> text = pack_reference(ref, idx, opt.threads);
  if (idx.l_pac == 0) throw InputError("reference has no bases");
  add_reverse_complement(text, opt.threads);
  const std::uint64_t n = text.size();
  rep.pack_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  std::vector<std::uint8_t> rows(n + 1);
  rows[0] = text[n - 1];  // row 0 is the suffix '$'
  idx.sa_intv = kSaInterval;
  idx.sa.assign(static_cast<std::size_t>((n + kSaInterval) / kSaInterval), 0);
  idx.sa[0] = ~0ull;
  rep.gpu = !opt.devices.empty() && sort_suffixes_on_gpus(text, rows.data(), idx.sa.data(), opt, rep);
  if (!rep.gpu) sort_suffixes_cpu(text, rows.data(), idx.sa.data(), opt.threads);
  rep.sort_s = seconds_since(t);
  t = std::chrono::steady_clock::now();
  if (opt.progress) opt.progress("bwt", 0);
  text = std::vector<std::uint8_t>();
  occ_from_rows(rows, idx, opt.threads);
  rep.bwt_s = seconds_since(t);
  return idx;
}

BwtIndex build_index(const std::vector<RefSeq>& ref) { return build_index(ref, IndexOptions{}); }

}  // namespace evk::barracuda_exact

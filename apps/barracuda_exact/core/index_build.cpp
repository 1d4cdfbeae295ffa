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

// Packs the reference (forward strand) into 2-bit codes, recording contigs and holes as bwa does.
std::vector<std::uint8_t> pack_reference(const std::vector<RefSeq>& ref, BwtIndex& idx) {
  std::size_t total = 0;
  for (const auto& r : ref) total += r.seq.size();
  std::vector<std::uint8_t> codes(total);
  Rand48 rng(idx.seed);
  std::int64_t pos = 0;
  for (const auto& r : ref) {
    Contig ct;
    ct.name = r.name;
    ct.anno = r.comment.empty() ? "(null)" : r.comment;
    ct.offset = pos;
    ct.len = static_cast<std::int32_t>(r.seq.size());
    char last = 0;
    for (char ch : r.seq) {
      int c = base_code(ch);
      if (c >= 4) {
        if (last == ch) {
          ++idx.holes.back().len;
        } else {
          idx.holes.push_back(Hole{pos, 1, ch});
          ++ct.n_ambs;
        }
        c = static_cast<int>(rng.lrand() & 3);
      }
      last = ch;
      codes[static_cast<std::size_t>(pos++)] = static_cast<std::uint8_t>(c);
    }
    idx.contigs.push_back(ct);
  }
  idx.l_pac = pos;
  idx.pac.assign(static_cast<std::size_t>((pos + 3) / 4), 0);
  for (std::int64_t i = 0; i < pos; ++i)
    idx.pac[static_cast<std::size_t>(i >> 2)] |= static_cast<std::uint8_t>(codes[static_cast<std::size_t>(i)] << ((~i & 3) << 1));
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

BwtIndex build_index(const std::vector<RefSeq>& ref, const IndexOptions& opt, IndexReport* report) {
  IndexReport local;
  IndexReport& rep = report ? *report : local;
  auto t = std::chrono::steady_clock::now();
  BwtIndex idx;
  std::vector<std::uint8_t> text = pack_reference(ref, idx);
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

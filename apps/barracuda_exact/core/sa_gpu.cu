// Host side of the GPU suffix sort (core/sa_gpu.hpp): memory per GPU, the batch plan from the
// bucket histogram, one worker thread per GPU, and per batch the radix sort, the rounds of
// segmented re-sorts, the ranks and the rows it emits. The doubling phase: sa_gpu_double.cu.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/sa_gpu_work.cuh"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact {
namespace sa_gpu {

std::size_t temp_bytes_for(u64 m, u64 c) {
  std::size_t radix = 0, seg = 0, sel1 = 0, sel2 = 0, sel3 = 0, sel4 = 0, scan = 0;
  cub::DoubleBuffer<u64> k(nullptr, nullptr);
  cub::DoubleBuffer<u64> v(nullptr, nullptr);
  EVK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, radix, k, v, static_cast<int>(m), 0, 64));
  cub::DoubleBuffer<unsigned> s(nullptr, nullptr);
  int* off = nullptr;
  EVK_CUDA(cub::DeviceSegmentedSort::SortPairs(nullptr, seg, k, s, static_cast<int>(c), static_cast<int>(c), off, off));
  const thrust::counting_iterator<int> iota(0);
  const unsigned char* flags = nullptr;
  unsigned* un = nullptr;
  EVK_CUDA(cub::DeviceSelect::Flagged(nullptr, sel1, iota, flags, off, un, static_cast<int>(m)));
  EVK_CUDA(cub::DeviceSelect::Flagged(nullptr, sel2, un, flags, un, un, static_cast<int>(m)));
  EVK_CUDA(cub::DeviceSelect::Flagged(nullptr, sel3, static_cast<unsigned char*>(nullptr), flags,
                                      static_cast<unsigned char*>(nullptr), un, static_cast<int>(m)));
  EVK_CUDA(cub::DeviceSelect::Flagged(nullptr, sel4, iota, flags, un, un, static_cast<int>(m)));
  EVK_CUDA(cub::DeviceScan::InclusiveScan(nullptr, scan, un, un, cuda::maximum<unsigned>{}, static_cast<int>(c)));
  return std::max({radix, seg, sel1, sel2, sel3, sel4, scan}) + (1u << 20);
}

unsigned resort_round(DeviceWork& w, WorkList& l, int cur, unsigned u, u64* pos) {
  const thrust::counting_iterator<int> iota(0);
  const unsigned segs = select_kept(w, iota, l.seg[cur], l.offsets, u);
  const int end = static_cast<int>(u);
  EVK_CUDA(cudaMemcpy(l.offsets + segs, &end, sizeof end, cudaMemcpyHostToDevice));
  cub::DoubleBuffer<u64> kb(l.keys[0], l.keys[1]);
  cub::DoubleBuffer<unsigned> vb(l.kslot[0], l.kslot[1]);
  std::size_t bytes = w.temp_bytes;
  EVK_CUDA(cub::DeviceSegmentedSort::SortPairs(w.temp, bytes, kb, vb, static_cast<int>(u), static_cast<int>(segs), l.offsets,
                                               l.offsets + 1));
  gather_positions<<<blocks_for(u), kThreads>>>(pos, vb.Current(), u, l.tmp);
  scatter_positions<<<blocks_for(u), kThreads>>>(pos, l.slot[cur], u, l.tmp);
  mark_runs<<<blocks_for(u), kThreads>>>(kb.Current(), l.seg[cur], u, l.head, l.keep);
  EVK_CUDA_LAST();
  spread_group_starts(w, l.slot[cur], l.head, u, l.first);
  const unsigned next = select_kept(w, l.slot[cur], l.keep, l.slot[1 - cur], u);
  select_kept(w, l.head, l.keep, l.seg[1 - cur], u);
  return next;
}

}  // namespace sa_gpu

namespace {

using namespace sa_gpu;
constexpr u64 kReserve = 768ull << 20;
constexpr u64 kRounds = 12;  // re-sort rounds of 29 bases before doubling takes over

struct Batch {
  u64 b0 = 0, b1 = 0;  // buckets [b0, b1)
  u64 m = 0;           // suffixes
  u64 row_base = 0;    // the SA row of its first suffix
};

// What the batches leave to doubling.
struct Shared {
  std::mutex mu;
  SaGpuReport rep;
  struct Chunk {
    u64 row_base;
    std::vector<std::uint64_t> pos, rank;
  };
  std::vector<Chunk> chunks;
};

u64 fixed_bytes(u64 words, u64 n) { return words * 8 + 5 * n + 4 * 256; }  // 3 carves, each padded to 256

// How many suffixes one batch on this GPU may hold, given its free memory (or the cap).
u64 batch_capacity(int device, u64 words, u64 cap, u64 n) {
  EVK_CUDA(cudaSetDevice(device));
  std::size_t free_b = 0, total_b = 0;
  EVK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  u64 budget = free_b > kReserve ? free_b - kReserve : 0;
  if (cap) budget = std::min<u64>(budget, cap);
  const u64 per_item = 32 + WorkList::kItemBytes / 2 + 1;
  const u64 fixed = fixed_bytes(words, n) + kBuckets * 8 + (8u << 20);
  u64 m = budget > fixed ? (budget - fixed) / per_item : 0;
  m = std::min({m, kMaxItems, n});
  if (m > 0) {
    const u64 temp = temp_bytes_for(m, m / 2 + 1);
    m = budget > fixed + temp ? std::min(m, (budget - fixed - temp) / per_item) : 0;
  }
  return m;
}

void alloc_work(DeviceWork& w, u64 words, u64 n, u64 m) {
  EVK_CUDA(cudaSetDevice(w.device));
  w.fixed.allocate(w.device, fixed_bytes(words, n));
  w.text = w.fixed.carve<u64>(words);
  w.rank_lo = w.fixed.carve<unsigned>(n);
  w.rank_hi = w.fixed.carve<unsigned char>(n);
  EVK_CUDA(cudaMemset(w.rank_lo, 0, n * 4));
  EVK_CUDA(cudaMemset(w.rank_hi, 0, n));
  w.capacity = m;
  const u64 c = m / 2 + 1;
  w.temp_bytes = temp_bytes_for(m, c);
  w.arena.allocate(w.device, 4 * m * 8 + c * WorkList::kItemBytes + 64 * 256 + w.temp_bytes + 16);
  for (int i = 0; i < 2; ++i) {
    w.keys[i] = w.arena.carve<u64>(m);
    w.pos[i] = w.arena.carve<u64>(m);
  }
  w.wl = carve_work_list(w.arena, c);
  w.count = w.arena.carve<unsigned>(4);
  w.temp = w.arena.carve<char>(w.temp_bytes);
  w.report.peak_bytes = w.fixed.bytes + w.arena.bytes;
}

// Re-sorts the runs of equal keys, 29 more bases per round, for up to kRounds rounds. Returns the
// rounds taken; *u and *cur: the work list left (unresolved suffixes).
u64 resort_runs(DeviceWork& w, u64 n, u64* pos, unsigned* u, int* cur) {
  u64 round = 0;
  while (*u > 0 && round < kRounds) {
    ++round;
    resort_keys<<<blocks_for(*u), kThreads>>>(w.text, n, round * kRoundBases, pos, w.wl.slot[*cur], *u, w.wl.keys[0],
                                              w.wl.kslot[0]);
    EVK_CUDA_LAST();
    *u = resort_round(w, w.wl, *cur, *u, pos);
    *cur = 1 - *cur;
  }
  return round;
}

// Ranks of the batch's suffixes; the unresolved ones (work list slot/u) go to the shared chunks.
void rank_batch_out(DeviceWork& w, const u64* pos, const Batch& b, const unsigned* slot, const unsigned char* seg,
                    unsigned u, Shared& sh) {
  rank_batch<<<blocks_for(b.m), kThreads>>>(pos, static_cast<unsigned>(b.m), b.row_base, w.rank_lo, w.rank_hi);
  EVK_CUDA_LAST();
  if (u == 0) return;
  spread_group_starts(w, slot, seg, u, w.wl.first);
  rank_groups<<<blocks_for(u), kThreads>>>(pos, slot, w.wl.first, u, b.row_base, w.rank_lo, w.rank_hi, w.wl.tmp,
                                           w.wl.keys[0]);
  EVK_CUDA_LAST();
  Shared::Chunk c{b.row_base, std::vector<std::uint64_t>(u), std::vector<std::uint64_t>(u)};
  EVK_CUDA(cudaMemcpy(c.pos.data(), w.wl.tmp, std::size_t{u} * 8, cudaMemcpyDeviceToHost));
  EVK_CUDA(cudaMemcpy(c.rank.data(), w.wl.keys[0], std::size_t{u} * 8, cudaMemcpyDeviceToHost));
  std::lock_guard<std::mutex> lock(sh.mu);
  sh.rep.doubled += u;
  sh.chunks.push_back(std::move(c));
}

// Sorts one batch and writes its rows to the host. False when its repeats outgrow the re-sort
// work list (the caller then halves the batch).
bool sort_batch(DeviceWork& w, u64 n, const Batch& b, std::uint8_t* bwt, std::uint64_t* samples, Shared& sh) {
  EVK_CUDA(cudaMemset(w.count, 0, sizeof(unsigned)));
  collect_batch<<<stride_blocks(n), kThreads>>>(w.text, n, b.b0, b.b1, w.keys[0], w.pos[0], w.count);
  EVK_CUDA_LAST();
  if (read_count(w.count) != b.m) throw std::logic_error("sa_gpu: a batch collected a different number of suffixes");
  const unsigned m = static_cast<unsigned>(b.m);
  cub::DoubleBuffer<u64> keys(w.keys[0], w.keys[1]);
  cub::DoubleBuffer<u64> pos(w.pos[0], w.pos[1]);
  std::size_t bytes = w.temp_bytes;
  EVK_CUDA(cub::DeviceRadixSort::SortPairs(w.temp, bytes, keys, pos, static_cast<int>(m), 0, 64));
  // round 0's run marks live in the spare key buffer, the slots of its runs in the spare positions
  auto* head0 = reinterpret_cast<unsigned char*>(keys.Alternate());
  unsigned char* keep0 = head0 + m;
  mark_runs<<<blocks_for(m), kThreads>>>(keys.Current(), nullptr, m, head0, keep0);
  EVK_CUDA_LAST();
  auto* slots0 = reinterpret_cast<unsigned*>(pos.Alternate());
  unsigned u = select_kept(w, thrust::counting_iterator<int>(0), keep0, slots0, m);
  if (u > w.wl.c) return false;
  EVK_CUDA(cudaMemcpy(w.wl.slot[0], slots0, std::size_t{u} * sizeof(unsigned), cudaMemcpyDeviceToDevice));
  select_kept(w, head0, keep0, w.wl.seg[0], m);
  const unsigned resorted = u;
  int cur = 0;
  const u64 rounds = resort_runs(w, n, pos.Current(), &u, &cur);
  rank_batch_out(w, pos.Current(), b, w.wl.slot[cur], w.wl.seg[cur], u, sh);
  const u64 first_sample = (b.row_base + 31) / 32 * 32;
  const u64 last_row = b.row_base + b.m - 1;
  const u64 n_samples = last_row >= first_sample ? (last_row - first_sample) / 32 + 1 : 0;
  auto* rows = reinterpret_cast<unsigned char*>(keys.Current());
  u64* samp = keys.Alternate();
  emit_rows<<<blocks_for(m), kThreads>>>(w.text, pos.Current(), m, b.row_base, first_sample, rows, samp);
  EVK_CUDA_LAST();
  EVK_CUDA(cudaMemcpy(bwt + b.row_base, rows, b.m, cudaMemcpyDeviceToHost));
  if (n_samples) EVK_CUDA(cudaMemcpy(samples + first_sample / 32, samp, n_samples * 8, cudaMemcpyDeviceToHost));
  std::lock_guard<std::mutex> lock(sh.mu);
  sh.rep.max_rounds = std::max<std::uint64_t>(sh.rep.max_rounds, rounds);
  sh.rep.resorted += resorted;
  ++sh.rep.batches;
  ++w.report.batches;
  w.report.suffixes += b.m;
  return true;
}

// Greedy batches of consecutive buckets holding at most `cap` suffixes each.
std::vector<Batch> plan_batches(const std::vector<u64>& hist, u64 cap, u64 first, u64 last) {
  std::vector<Batch> out;
  u64 row = 1;
  for (u64 b = 0; b < first; ++b) row += hist[b];
  Batch cur{first, first, 0, row};
  for (u64 b = first; b < last; ++b) {
    if (cur.m + hist[b] > cap && cur.m > 0) {
      out.push_back(cur);
      cur = Batch{b, b, 0, row};
    }
    if (hist[b] > cap) throw SaGpuNoRoom("12 bases repeat " + std::to_string(hist[b]) + " times, more than a GPU batch holds");
    cur.b1 = b + 1;
    cur.m += hist[b];
    row += hist[b];
  }
  if (cur.m > 0) out.push_back(cur);
  return out;
}

std::vector<u64> pack_text(const std::uint8_t* text, u64 n) {
  std::vector<u64> words((n >> 5) + 2, 0);
  parallel_for((n + 31) / 32, [&](std::size_t w0, std::size_t w1) {
    for (std::size_t i = w0; i < w1; ++i) {
      u64 v = 0;
      for (u64 j = 0; j < 32; ++j) {
        const u64 p = i * 32 + j;
        v = (v << 2) | (p < n ? text[p] : 0);
      }
      words[i] = v;
    }
  });
  return words;
}

std::vector<u64> bucket_histogram(DeviceWork& w, u64 n) {
  std::vector<u64> hist(kBuckets);
  EVK_CUDA(cudaSetDevice(w.device));
  Arena a;
  a.allocate(w.device, kBuckets * 8);
  u64* d_hist = a.carve<u64>(kBuckets);
  EVK_CUDA(cudaMemset(d_hist, 0, kBuckets * 8));
  count_buckets<<<stride_blocks(n), kThreads>>>(w.text, n, d_hist);
  EVK_CUDA_LAST();
  EVK_CUDA(cudaMemcpy(hist.data(), d_hist, kBuckets * 8, cudaMemcpyDeviceToHost));
  w.report.peak_bytes += kBuckets * 8;
  return hist;
}

// One worker per GPU takes batches in turn; a batch whose repeats outgrow the work list is
// halved (by buckets) until it fits.
void run_batches(std::vector<std::unique_ptr<DeviceWork>>& work, const std::vector<u64>& hist, u64 cap, u64 n,
                 std::uint8_t* bwt, std::uint64_t* samples, const SaGpuOptions& opt, Shared& sh) {
  const std::vector<Batch> plan = plan_batches(hist, cap, 0, kBuckets);
  std::atomic<std::size_t> next{0};
  u64 placed = 0;
  std::exception_ptr failure;
  std::function<void(DeviceWork&, const Batch&)> run = [&](DeviceWork& w, const Batch& b) {
    if (sort_batch(w, n, b, bwt, samples, sh)) {
      std::lock_guard<std::mutex> lock(sh.mu);
      placed += b.m;
      if (opt.progress) opt.progress(placed, n);
      return;
    }
    const u64 biggest = *std::max_element(hist.begin() + static_cast<std::ptrdiff_t>(b.b0),
                                          hist.begin() + static_cast<std::ptrdiff_t>(b.b1));
    const std::vector<Batch> parts = plan_batches(hist, std::max((b.m + 1) / 2, biggest), b.b0, b.b1);
    if (parts.size() < 2) throw SaGpuNoRoom("a bucket's repeats outgrow the GPU's re-sort work list");
    for (const Batch& part : parts) run(w, part);
  };
  std::vector<std::thread> threads;
  for (auto& wp : work) {
    threads.emplace_back([&, w = wp.get()] {
      try {
        EVK_CUDA(cudaSetDevice(w->device));
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i; (i = next++) < plan.size();) run(*w, plan[i]);
        w->report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } catch (...) {
        std::lock_guard<std::mutex> lock(sh.mu);
        if (!failure) failure = std::current_exception();
        next = plan.size();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

// The suffixes the batches left in groups, on the first GPU (which holds every rank by then),
// finished by doubling.
void finish_by_doubling(DeviceWork& w, u64 n, const std::uint8_t* text, std::uint8_t* bwt, std::uint64_t* samples,
                        Shared& sh) {
  std::sort(sh.chunks.begin(), sh.chunks.end(), [](const auto& a, const auto& b) { return a.row_base < b.row_base; });
  std::vector<std::uint64_t> pos, rank;
  pos.reserve(sh.rep.doubled);
  rank.reserve(sh.rep.doubled);
  for (auto& c : sh.chunks) {
    pos.insert(pos.end(), c.pos.begin(), c.pos.end());
    rank.insert(rank.end(), c.rank.begin(), c.rank.end());
    c = Shared::Chunk{};
  }
  const auto t0 = std::chrono::steady_clock::now();
  sh.rep.doubling_steps = double_unresolved(w, n, kRoundBases * (kRounds + 1), pos, rank, text, bwt, samples);
  w.report.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

SaGpuReport sort_suffixes_gpu(const std::uint8_t* text, std::uint64_t n, std::uint8_t* bwt, std::uint64_t* samples,
                              const SaGpuOptions& opt) {
  if (opt.devices.empty()) throw std::invalid_argument("sort_suffixes_gpu: no devices");
  const std::vector<u64> words = pack_text(text, n);
  u64 cap = kMaxItems;
  for (int d : opt.devices) {
    const u64 c = batch_capacity(d, words.size(), opt.memory_cap, n);
    if (c < std::min<u64>(n, 1u << 16)) {
      cudaDeviceProp prop{};
      cudaGetDeviceProperties(&prop, d);
      throw SaGpuNoRoom("GPU " + std::to_string(d) + " (" + prop.name + ") has no room for the " +
                        std::to_string((words.size() * 8 + 5 * n) >> 20) + " MiB of text and ranks and a batch of suffixes");
    }
    cap = std::min(cap, c);
  }
  Shared sh;
  sh.rep.batch_capacity = cap;
  sh.rep.checked = opt.check_order;
  std::vector<std::unique_ptr<DeviceWork>> work;
  for (int d : opt.devices) {
    work.push_back(std::make_unique<DeviceWork>());
    DeviceWork& w = *work.back();
    w.device = d;
    cudaDeviceProp prop{};
    EVK_CUDA(cudaGetDeviceProperties(&prop, d));
    w.report.device = d;
    w.report.name = prop.name;
    alloc_work(w, words.size(), n, cap);
    EVK_CUDA(cudaMemcpy(w.text, words.data(), words.size() * 8, cudaMemcpyHostToDevice));
  }
  const std::vector<u64> hist = bucket_histogram(*work.front(), n);
  run_batches(work, hist, cap, n, bwt, samples, opt, sh);
  if (sh.rep.doubled > 0 || opt.check_order) {  // every rank onto the first GPU
    for (auto& w : work) w->arena.release();
    for (std::size_t d = 1; d < work.size(); ++d) {
      merge_ranks_into(*work[0], *work[d], n);
      work[d]->fixed.release();
    }
  }
  if (sh.rep.doubled > 0) finish_by_doubling(*work[0], n, text, bwt, samples, sh);
  if (opt.check_order) sh.rep.disorders = check_rows(*work[0], n);
  SaGpuReport rep = sh.rep;
  for (auto& w : work) rep.devices.push_back(w->report);
  return rep;
}

std::uint64_t check_suffix_order_gpu(const std::uint8_t* text, std::uint64_t n, const std::uint64_t* sa, int device) {
  const std::vector<u64> words = pack_text(text, n);
  std::vector<unsigned> lo(n, 0);
  std::vector<unsigned char> hi(n, 0);
  for (u64 i = 0; i < n; ++i) {  // rank(position) = its row; a position no row holds keeps rank 0
    if (sa[i] >= n) throw std::invalid_argument("check_suffix_order_gpu: position out of range");
    lo[sa[i]] = static_cast<unsigned>(i + 1);
    hi[sa[i]] = static_cast<unsigned char>((i + 1) >> 32);
  }
  DeviceWork w;
  w.device = device;
  EVK_CUDA(cudaSetDevice(device));
  w.fixed.allocate(device, fixed_bytes(words.size(), n));
  w.text = w.fixed.carve<u64>(words.size());
  w.rank_lo = w.fixed.carve<unsigned>(n);
  w.rank_hi = w.fixed.carve<unsigned char>(n);
  EVK_CUDA(cudaMemcpy(w.text, words.data(), words.size() * 8, cudaMemcpyHostToDevice));
  EVK_CUDA(cudaMemcpy(w.rank_lo, lo.data(), n * 4, cudaMemcpyHostToDevice));
  EVK_CUDA(cudaMemcpy(w.rank_hi, hi.data(), n, cudaMemcpyHostToDevice));
  return check_rows(w, n);
}

}  // namespace evk::barracuda_exact

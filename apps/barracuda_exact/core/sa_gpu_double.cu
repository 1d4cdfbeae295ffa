// The GPU suffix sort's doubling phase (core/sa_gpu.hpp): the suffixes that long exact repeats
// leave in groups after the batches' rounds, sorted by the ranks h bases on, h doubling each step
// (Manber and Myers 1993); and the merge of several GPUs' ranks onto the first.
#include <algorithm>

#include "core/sa_gpu_work.cuh"
#include "evk/parallel.hpp"

namespace evk::barracuda_exact::sa_gpu {

void merge_ranks_into(DeviceWork& w, DeviceWork& other, u64 n) {
  constexpr u64 kChunk = 64ull << 20;
  EVK_CUDA(cudaSetDevice(w.device));
  Arena a;
  a.allocate(w.device, kChunk * 5 + 512);
  auto* lo = a.carve<unsigned>(kChunk);
  auto* hi = a.carve<unsigned char>(kChunk);
  for (u64 i = 0; i < n; i += kChunk) {
    const u64 c = std::min(kChunk, n - i);
    EVK_CUDA(cudaMemcpyPeer(lo, w.device, other.rank_lo + i, other.device, c * 4));
    EVK_CUDA(cudaMemcpyPeer(hi, w.device, other.rank_hi + i, other.device, c));
    merge_ranks<<<blocks_for(c), kThreads>>>(w.rank_lo + i, w.rank_hi + i, lo, hi, c);
    EVK_CUDA_LAST();
  }
  EVK_CUDA(cudaDeviceSynchronize());
}

namespace {

// Rows of the doubled suffixes into the host's BWT rows and samples.
void place_rows(const std::vector<std::uint64_t>& pos, const std::vector<std::uint64_t>& row, const std::uint8_t* text,
                std::uint8_t* bwt, std::uint64_t* samples) {
  parallel_for(pos.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      const std::uint64_t p = pos[k], r = row[k];
      bwt[r] = p == 0 ? 4 : text[p - 1];
      if (r % 32 == 0) samples[r / 32] = p;
    }
  });
}

}  // namespace

u64 double_unresolved(DeviceWork& w, u64 n, u64 h, std::vector<std::uint64_t>& u_pos, std::vector<std::uint64_t>& u_rank,
                      const std::uint8_t* text, std::uint8_t* bwt, std::uint64_t* samples) {
  const u64 total = u_pos.size();
  if (total > kMaxItems) throw SaGpuNoRoom(std::to_string(total) + " suffixes in long repeats, more than one GPU sort holds");
  EVK_CUDA(cudaSetDevice(w.device));
  w.temp_bytes = temp_bytes_for(total, total);
  const u64 bytes = 3 * total * 8 + total * WorkList::kItemBytes + 32 * 256 + w.temp_bytes + 16;
  std::size_t free_b = 0, total_b = 0;
  EVK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (bytes + (256ull << 20) > free_b)
    throw SaGpuNoRoom(std::to_string(total) + " suffixes in long repeats need " + std::to_string(bytes >> 20) + " MiB, " +
                      std::to_string(free_b >> 20) + " MiB free");
  w.arena.allocate(w.device, bytes);
  w.report.peak_bytes = std::max<std::uint64_t>(w.report.peak_bytes, w.fixed.bytes + bytes);
  u64* pos = w.arena.carve<u64>(total);
  u64* group = w.arena.carve<u64>(total);
  u64* row = w.arena.carve<u64>(total);
  WorkList l = carve_work_list(w.arena, total);
  w.count = w.arena.carve<unsigned>(4);
  w.temp = w.arena.carve<char>(w.temp_bytes);
  EVK_CUDA(cudaMemcpy(pos, u_pos.data(), total * 8, cudaMemcpyHostToDevice));
  EVK_CUDA(cudaMemcpy(group, u_rank.data(), total * 8, cudaMemcpyHostToDevice));
  unsigned u = static_cast<unsigned>(total);
  u_groups<<<blocks_for(u), kThreads>>>(group, u, l.slot[0], l.seg[0]);
  EVK_CUDA_LAST();
  spread_group_starts(w, l.slot[0], l.seg[0], u, l.first);
  u_rows<<<blocks_for(u), kThreads>>>(group, l.first, u, row);
  EVK_CUDA_LAST();
  int cur = 0;
  u64 steps = 0;
  while (u > 0) {
    ++steps;
    rank_keys<<<blocks_for(u), kThreads>>>(w.rank_lo, w.rank_hi, n, h, pos, l.slot[cur], u, l.keys[0], l.kslot[0]);
    EVK_CUDA_LAST();
    const unsigned next = resort_round(w, l, cur, u, pos);
    rerank<<<blocks_for(u), kThreads>>>(pos, row, l.slot[cur], l.first, u, w.rank_lo, w.rank_hi);
    EVK_CUDA_LAST();
    cur = 1 - cur;
    u = next;
    h *= 2;
  }
  EVK_CUDA(cudaMemcpy(u_pos.data(), pos, total * 8, cudaMemcpyDeviceToHost));
  EVK_CUDA(cudaMemcpy(u_rank.data(), row, total * 8, cudaMemcpyDeviceToHost));
  w.arena.release();
  place_rows(u_pos, u_rank, text, bwt, samples);
  return steps;
}

u64 check_rows(DeviceWork& w, u64 n) {
  EVK_CUDA(cudaSetDevice(w.device));
  std::size_t free_b = 0, total_b = 0;
  EVK_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const u64 room = free_b > (1ull << 30) ? (free_b - (1ull << 30)) / 8 : 0;
  if (room < 2) throw SaGpuNoRoom("no GPU memory left for the order check");
  const u64 chunk = std::min<u64>(n, room);
  Arena a;
  a.allocate(w.device, chunk * 8 + 1024);
  u64* sa = a.carve<u64>(chunk);
  auto* bad = a.carve<unsigned long long>(1);
  EVK_CUDA(cudaMemset(bad, 0, sizeof *bad));
  // rows 1..n in chunks that overlap by one row, so every adjacent pair is inside one chunk
  for (u64 r0 = 1; r0 <= n;) {
    const u64 len = std::min(chunk, n + 1 - r0);
    EVK_CUDA(cudaMemset(sa, 0xFF, len * 8));
    rows_by_rank<<<stride_blocks(n), kThreads>>>(w.rank_lo, w.rank_hi, n, r0, len, sa, bad);
    check_adjacent<<<blocks_for(len), kThreads>>>(w.text, w.rank_lo, w.rank_hi, n, sa, len, bad);
    EVK_CUDA_LAST();
    if (r0 + len > n) break;
    r0 += len - 1;
  }
  unsigned long long faults = 0;
  EVK_CUDA(cudaMemcpy(&faults, bad, sizeof faults, cudaMemcpyDeviceToHost));
  return faults;
}

}  // namespace evk::barracuda_exact::sa_gpu

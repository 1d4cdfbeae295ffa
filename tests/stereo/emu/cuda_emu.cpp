// Fiber scheduler of the CUDA emulator (see cuda_emu.hpp). Fibers: ucontext for the first entry,
// _setjmp/_longjmp for every later switch (no signal-mask system call per switch).
#undef _FORTIFY_SOURCE  // longjmp between fiber stacks is what this file does on purpose
#include "cuda_emu.hpp"

#include <setjmp.h>
#include <ucontext.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

namespace emu {

dim3 g_block_idx, g_block_dim, g_grid_dim;

namespace {
constexpr std::size_t kStack = 128 * 1024;

enum State { kRunnable, kAtBarrier, kAtWarp, kDone };

struct Fiber {
  ucontext_t uc;
  jmp_buf jb;
  ThreadCtx ctx;
  State st = kRunnable;
  bool started = false;
  // pending warp collective
  Collective kind = kSyncWarp;
  unsigned mask = 0;
  std::uint64_t value = 0, result = 0;
  int param = 0, width = 32;
};

std::vector<std::unique_ptr<char[]>> g_stacks;
std::vector<Fiber> g_fibers;
Fiber* g_cur = nullptr;
jmp_buf g_sched;
const std::function<void()>* g_body = nullptr;
std::vector<unsigned char> g_smem;
std::string g_error;

void to_scheduler() {
  if (!_setjmp(g_cur->jb)) _longjmp(g_sched, 1);
}

void trampoline() {
  (*g_body)();
  g_cur->st = kDone;
  _longjmp(g_sched, 1);
}

void resume(Fiber& f) {
  g_cur = &f;
  if (!_setjmp(g_sched)) {
    if (!f.started) {
      f.started = true;
      setcontext(&f.uc);
    }
    _longjmp(f.jb, 1);
  }
}

// Releases the warp collective that lane `first` waits at, if every lane of its mask waits there.
bool try_release_warp(int warp_base, int nthreads, int first) {
  Fiber& a = g_fibers[static_cast<std::size_t>(first)];
  const unsigned mask = a.mask;
  for (int l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u)) continue;
    const int t = warp_base + l;
    if (t >= nthreads) {
      g_error = "warp collective mask names lane " + std::to_string(l) + " beyond the block";
      return false;
    }
    const Fiber& f = g_fibers[static_cast<std::size_t>(t)];
    if (f.st == kDone) {
      g_error = "warp collective mask names lane " + std::to_string(l) + ", which has exited";
      return false;
    }
    if (f.st != kAtWarp) return false;  // not there yet (or at __syncthreads: deadlock check decides)
    if (f.mask != mask || f.kind != a.kind) {
      g_error = "lanes of one warp collective disagree on its mask or kind";
      return false;
    }
  }
  const int lane_first = first - warp_base;
  if (!(mask >> lane_first & 1u)) {
    g_error = "a lane calls a warp collective with a mask that leaves itself out";
    return false;
  }
  std::uint64_t vote = 0;
  bool any = false, all = true;
  std::uint64_t vmin = ~0ull;
  for (int l = 0; l < 32; ++l)
    if (mask >> l & 1u) {
      vmin = std::min(vmin, g_fibers[static_cast<std::size_t>(warp_base + l)].value);
      const bool p = g_fibers[static_cast<std::size_t>(warp_base + l)].value != 0;
      vote |= static_cast<std::uint64_t>(p) << l;
      any = any || p;
      all = all && p;
    }
  for (int l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u)) continue;
    Fiber& f = g_fibers[static_cast<std::size_t>(warp_base + l)];
    const int w = f.width;
    if (w < 1 || w > 32 || (w & (w - 1))) {
      g_error = "shuffle width must be a power of two <= 32";
      return false;
    }
    int src = l;
    const int seg = l / w * w;
    switch (f.kind) {
      case kShflIdx: src = seg + (f.param & (w - 1)); break;
      case kShflUp: src = (l - seg) >= f.param ? l - f.param : l; break;
      case kShflDown: src = (l - seg) + f.param < w ? l + f.param : l; break;
      case kShflXor: src = l ^ f.param; if (src >= seg + w) src = l; break;
      default: break;
    }
    switch (f.kind) {
      case kShflIdx: case kShflUp: case kShflDown: case kShflXor:
        if (src < 0 || src > 31 || !(mask >> src & 1u)) {
          g_error = "shuffle from lane " + std::to_string(src) + ", which is not in the mask";
          return false;
        }
        f.result = g_fibers[static_cast<std::size_t>(warp_base + src)].value;
        break;
      case kBallot: f.result = vote; break;
      case kAny: f.result = any; break;
      case kAll: f.result = all; break;
      case kReduceMin: f.result = vmin; break;
      case kSyncWarp: f.result = 0; break;
    }
  }
  for (int l = 0; l < 32; ++l)
    if (mask >> l & 1u) g_fibers[static_cast<std::size_t>(warp_base + l)].st = kRunnable;
  return true;
}
}  // namespace

ThreadCtx* current() { return &g_cur->ctx; }
unsigned char* dyn_smem() { return g_smem.data(); }

void fail(const std::string& why) {
  g_error = why;
  g_cur->st = kDone;
  _longjmp(g_sched, 1);
}

void syncthreads() {
  g_cur->st = kAtBarrier;
  to_scheduler();
}

std::uint64_t warp_collective(Collective kind, unsigned mask, std::uint64_t value, int param, int width) {
  Fiber& f = *g_cur;
  f.kind = kind;
  f.mask = mask;
  f.value = value;
  f.param = param;
  f.width = width;
  f.st = kAtWarp;
  to_scheduler();
  return g_cur->result;
}

void launch(dim3 grid, dim3 block, std::size_t smem, const std::function<void()>& body, std::uint64_t seed) {
  const int n = static_cast<int>(block.x * block.y * block.z);
  if (n < 1 || n > 1024) throw std::runtime_error("emu: block of " + std::to_string(n) + " threads");
  if (grid.x < 1 || grid.y < 1 || grid.z < 1 || grid.y > 65535 || grid.z > 65535)
    throw std::runtime_error("emu: bad grid");
  while (static_cast<int>(g_stacks.size()) < n) g_stacks.emplace_back(new char[kStack]);
  g_fibers.assign(static_cast<std::size_t>(n), Fiber{});
  g_body = &body;
  g_block_dim = block;
  g_grid_dim = grid;
  g_error.clear();
  std::mt19937_64 rng(seed);
  std::vector<int> order;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        g_block_idx = dim3(bx, by, bz);
        g_smem.assign(smem + 16, 0xCD);  // shared memory starts as garbage
        for (int t = 0; t < n; ++t) {
          Fiber& f = g_fibers[static_cast<std::size_t>(t)];
          f = Fiber{};
          f.ctx.linear = t;
          f.ctx.tid = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
          getcontext(&f.uc);
          f.uc.uc_stack.ss_sp = g_stacks[static_cast<std::size_t>(t)].get();
          f.uc.uc_stack.ss_size = kStack;
          f.uc.uc_link = nullptr;
          makecontext(&f.uc, trampoline, 0);
        }
        for (;;) {
          order.clear();
          for (int t = 0; t < n; ++t)
            if (g_fibers[static_cast<std::size_t>(t)].st == kRunnable) order.push_back(t);
          if (!order.empty()) {
            std::shuffle(order.begin(), order.end(), rng);
            for (int t : order) {
              resume(g_fibers[static_cast<std::size_t>(t)]);
              if (!g_error.empty()) throw std::runtime_error("emu: " + g_error);
            }
            continue;
          }
          int live = 0, at_bar = 0;
          for (const Fiber& f : g_fibers) {
            live += f.st != kDone;
            at_bar += f.st == kAtBarrier;
          }
          if (live == 0) break;
          bool released = false;
          for (int t = 0; t < n && !released; ++t)
            if (g_fibers[static_cast<std::size_t>(t)].st == kAtWarp) {
              released = try_release_warp(t / 32 * 32, n, t);
              if (!g_error.empty()) throw std::runtime_error("emu: " + g_error);
            }
          if (released) continue;
          if (at_bar == live) {
            for (Fiber& f : g_fibers)
              if (f.st == kAtBarrier) f.st = kRunnable;
            continue;
          }
          throw std::runtime_error("emu: deadlock (threads wait at different barriers or collectives)");
        }
      }
}

}  // namespace emu

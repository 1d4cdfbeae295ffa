#include "io/map_run.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/gpu_exact.hpp"
#include "core/hits.hpp"
#include "core/kernel_config.hpp"
#include "core/match.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "io/index_files.hpp"
#include "io/sam_writer.hpp"
#include "io/sequences.hpp"

namespace evk::barracuda_exact {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

template <class T>
class Queue {  // bounded; close() wakes everyone, pop() then drains and returns nullopt
 public:
  explicit Queue(std::size_t cap) : cap_(cap) {}
  bool push(T v) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return closed_ || q_.size() < cap_; });
    if (closed_) return false;
    q_.push_back(std::move(v));
    cv_.notify_all();
    return true;
  }
  std::optional<T> pop() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return closed_ || !q_.empty(); });
    if (q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return v;
  }
  void close() {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  std::size_t cap_;
  std::deque<T> q_;
  bool closed_ = false;
  std::mutex m_;
  std::condition_variable cv_;
};

struct Batch {
  ReadBatch reads;
  ReadCodes codes;
  PackedReads packed;
  std::vector<Hit> hits;
};
using BatchPtr = std::unique_ptr<Batch>;

class Failure {  // the first exception of any stage
 public:
  void set(std::exception_ptr e) {
    std::lock_guard<std::mutex> l(m_);
    if (!e_) e_ = e;
  }
  void rethrow() {
    if (e_) std::rethrow_exception(e_);
  }

 private:
  std::mutex m_;
  std::exception_ptr e_;
};

}  // namespace

MapStats run_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress) {
  MapStats st;
  const auto t0 = Clock::now();
  // outputs first: a bad output path fails before any work
  const bool bam = sam_path_is_bam(opt.out);
  (void)bam;
  std::optional<AtomicOutput> out_file, un_file;
  if (opt.out != "-") out_file.emplace(opt.out);
  if (!opt.unmatched.empty()) un_file.emplace(opt.unmatched);
  ReadSource source(opt.reads);

  auto t = Clock::now();
  const BwtIndex idx = read_index(opt.ref);
  st.index_s = since(t);

  std::unique_ptr<SamWriter> sam =
      std::make_unique<SamWriter>(opt.out, out_file ? out_file->temp_path().string() : "-", idx, opt.command_line, opt.threads);
  std::unique_ptr<FastqWriter> fq;
  if (un_file) fq = std::make_unique<FastqWriter>(opt.unmatched, un_file->temp_path().string());

#if defined(EVK_HAVE_CUDA)
  std::unique_ptr<GpuMatcher> gpu;
  if (opt.gpu)
    gpu = std::make_unique<GpuMatcher>(idx, opt.kernel_config.empty() ? default_kernel_config() : opt.kernel_config,
                                       opt.device, opt.kernel_source);
  if (gpu) st.kernel_origin = gpu->origin();
#else
  if (opt.gpu) throw InputError("--backend gpu: built without CUDA");
#endif

  Queue<BatchPtr> parsed(2), matched(2);
  Failure fail;
  double parse_s = 0, write_s = 0;
  std::thread reader([&] {
    try {
      for (;;) {
        const auto tp = Clock::now();
        auto b = std::make_unique<Batch>();
        if (!source.next(b->reads, opt.batch_reads, opt.batch_reads * 160, kMaxReadLen)) break;
        for (std::size_t i = 0; i < b->reads.size(); ++i) b->codes.add(b->reads.seq[i].data(), b->reads.seq[i].size());
        if (opt.gpu) pack_reads(b->codes, b->packed);
        parse_s += since(tp);
        if (!parsed.push(std::move(b))) break;
      }
    } catch (...) {
      fail.set(std::current_exception());
      matched.close();
    }
    parsed.close();
  });
  std::thread writer([&] {
    try {
      std::uint64_t done = 0;
      while (auto b = matched.pop()) {
        const auto tw = Clock::now();
        sam->write((*b)->reads, (*b)->hits);
        if (fq) fq->write((*b)->reads, (*b)->hits);
        write_s += since(tw);
        done += (*b)->reads.size();
        if (progress) progress(done);
      }
    } catch (...) {
      fail.set(std::current_exception());
      parsed.close();
    }
    matched.close();
  });
  try {
    while (auto b = parsed.pop()) {
      Batch& B = **b;
      std::vector<KL> kl;
      auto tm = Clock::now();
#if defined(EVK_HAVE_CUDA)
      if (gpu) {
        GpuBatchTimes gt;
        kl = gpu->match(B.packed, &gt);
        st.transfer_s += (gt.upload_ms + gt.download_ms) / 1e3;
        st.kernel_s += gt.kernel_ms / 1e3;
      } else
#endif
      {
        kl = match_cpu(idx, B.codes, opt.threads);
      }
      st.match_s += since(tm);
      tm = Clock::now();
      B.hits = resolve_hits(idx, kl, B.codes.len, opt.threads);
      st.lookup_s += since(tm);
      for (const auto& h : B.hits) {
        if (!h.mapped()) ++st.unmatched;
        else if (h.count == 1) ++st.unique;
        else ++st.repeat;
        st.bridging += h.bridging;
      }
      st.reads += B.reads.size();
      if (!matched.push(std::move(*b))) break;
    }
  } catch (...) {
    fail.set(std::current_exception());
    parsed.close();
  }
  matched.close();
  reader.join();
  writer.join();
  fail.rethrow();
  st.parse_s = parse_s;
  t = Clock::now();
  sam->close();
  if (fq) fq->close();
  st.write_s = write_s + since(t);
  if (out_file) out_file->commit();
  if (un_file) un_file->commit();
  st.total_s = since(t0);
  return st;
}

}  // namespace evk::barracuda_exact

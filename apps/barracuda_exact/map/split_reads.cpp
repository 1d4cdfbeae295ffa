#include "map/split_reads.hpp"

#include <htslib/bgzf.h>

#include <memory>
#include <optional>

#include "core/kernel_config.hpp"
#include "evk/atomic_file.hpp"
#include "evk/error.hpp"
#include "evk/parallel.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "evk/task_pool.hpp"
#include "io/text_input.hpp"

namespace evk::barracuda_exact {
namespace {

struct Shard {
  std::string path;
  AtomicOutput file;
  BGZF* fp = nullptr;
  Shard(const std::string& p, int threads, int level) : path(p), file(p) {
    const std::string mode = "w" + std::to_string(level);
    fp = bgzf_open(file.temp_path().c_str(), mode.c_str());
    if (!fp) input_error(path, "cannot open for writing");
    if (threads > 1 && bgzf_mt(fp, threads, 256) < 0) input_error(path, "cannot start the compression threads");
  }
  ~Shard() {
    if (fp) bgzf_close(fp);
  }
  void write(const std::string& s) {
    if (!s.empty() && bgzf_write(fp, s.data(), s.size()) < 0) input_error(path, "write failed (disk full?)");
  }
  void close() {
    const int r = bgzf_close(fp);
    fp = nullptr;
    if (r < 0) input_error(path, "write failed (disk full?)");
    file.commit();
  }
};

// The records of a scanned block as FASTQ/FASTA text, formatted in parallel parts.
std::string format_block(const ScanBatch& b, TaskPool& pool) {
  constexpr std::size_t kPart = 1024;
  const std::size_t n = b.recs.size(), parts = (n + kPart - 1) / kPart;
  std::vector<std::string> text(parts);
  pool.parallel_for(parts, 1, [&](std::size_t p0, std::size_t p1) {
    for (std::size_t p = p0; p < p1; ++p)
      for (std::size_t i = p * kPart; i < std::min(n, (p + 1) * kPart); ++i) {
        const RecordSpan& r = b.recs[i];
        std::string& o = text[p];
        o += r.qual ? '@' : '>';
        o.append(r.name, r.name_len);
        o += '\n';
        o.append(r.seq, r.seq_len);
        o += '\n';
        if (r.qual) {
          o += "+\n";
          o.append(r.qual, r.seq_len);
          o += '\n';
        }
      }
  });
  std::string all;
  for (const auto& t : text) all += t;
  return all;
}

}  // namespace

std::vector<std::uint64_t> split_reads(const SplitOptions& opt) {
  const std::size_t n = opt.out.size();
  if (n == 0) input_error("--shards", "at least one shard");
  const bool pairs = !opt.reads2.empty();
  if (pairs && opt.out2.size() != n) throw std::invalid_argument("split_reads: one mate output per shard");
  const int threads = opt.threads > 0 ? opt.threads : default_threads();
  std::vector<std::unique_ptr<Shard>> s1, s2;  // outputs first: a bad path fails before any work
  const int per_shard = std::max(1, threads / static_cast<int>(n));
  for (const auto& p : opt.out) s1.push_back(std::make_unique<Shard>(p, per_shard, opt.level));
  if (pairs)
    for (const auto& p : opt.out2) s2.push_back(std::make_unique<Shard>(p, per_shard, opt.level));
  TaskPool pool(threads);
  TextInput in1(opt.reads, pool);
  std::optional<TextInput> in2;
  if (pairs) in2.emplace(opt.reads2, pool);
  RecordScanner scan1(in1);
  std::optional<RecordScanner> scan2;
  if (pairs) scan2.emplace(*in2);
  std::vector<std::uint64_t> counts(n, 0);
  ScanBatch b1, b2;
  const std::size_t no_base_limit = ~std::size_t(0);  // blocks end at `block` records only, in both files alike
  for (std::size_t k = 0;; ++k) {
    const bool more1 = scan1.next(b1, opt.block, no_base_limit, kMaxReadLen);
    check_batch(opt.reads, b1, pool);  // the reads' rules (read_rules.hpp), then b1's own error
    if (pairs) {
      scan2->next(b2, opt.block, no_base_limit, kMaxReadLen);
      check_batch(opt.reads2, b2, pool);
      if (b1.recs.size() != b2.recs.size())
        input_error(b1.recs.size() < b2.recs.size() ? opt.reads : opt.reads2,
                    "has fewer records than its mate file (" + std::to_string(scan1.records()) + " vs " +
                        std::to_string(scan2->records()) + " read)");
    }
    if (!more1) break;
    s1[k % n]->write(format_block(b1, pool));
    if (pairs) s2[k % n]->write(format_block(b2, pool));
    counts[k % n] += b1.recs.size();
  }
  for (auto& s : s1) s->close();
  for (auto& s : s2) s->close();
  return counts;
}

}  // namespace evk::barracuda_exact

// GPU: the inexact kernel against the CPU search (itself tested equal to bwa aln) on every read,
// outputs poisoned before each launch: the embedded build, NVRTC builds with other limits and block
// sizes (the handed-back reads exactly those the CPU predicts, the merged batch equal to the CPU's),
// non-default search options, the GI problem's evaluation, and the tool's GPU path against its CPU
// path (single and paired end, SAM identical byte for byte in every record).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "aln_settings.hpp"
#include "core/aln_compact.hpp"
#include "gi/aln_gi_problem.hpp"
#include "core/aln_gpu.hpp"
#include "core/aln_kernel.hpp"
#include "core/aln_search.hpp"
#include "gi/gi_problem.hpp"
#include "evk/cuda_check.hpp"
#include "evk_testing.hpp"

namespace bc = evk::barracuda_exact;

namespace {

struct Outcome {
  std::size_t answered = 0, handed_back = 0, wrong = 0, wrong_hand_back = 0;
};

// Runs the aligner's kernel and checks every read against the CPU search and its hand-back prediction.
Outcome check_gpu(bc::GpuAligner& g, const bc::ReadCodes& reads, const bc::AlnOptions& opt) {
  const bc::BwtIndex& idx = bc::gi_reference_index();
  Outcome o;
  std::vector<std::uint32_t> n_out;
  std::vector<std::uint64_t> aln_out;
  bc::GpuAlnTimes t;
  g.run(reads, n_out, aln_out, &t);
  const bc::AlnBatch ref = bc::aln_search_batch(idx, reads, opt, 0);
  std::uint32_t max_len = 0;
  for (auto l : reads.len) max_len = std::max(max_len, l);
  bc::AlnSearcher s(idx, opt);
  s.set_batch_max_gapo(std::min(opt.max_gapo, bc::aln_max_diff(opt, static_cast<int>(max_len))));
  const bc::InexactKernelConfig& cfg = g.config();
  std::vector<bc::Aln> tmp;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    bc::AlnSearchStats st;
    tmp.clear();
    s.search(reads.codes.data() + reads.offset[i], reads.len[i], tmp, &st);
    const bool must = bc::kernel_answers(st, reads.len[i], cfg.max_len, cfg.stack_cap, cfg.aln_cap);
    if (n_out[i] == bc::kHandedBack) {
      ++o.handed_back;
      if (must && o.wrong_hand_back++ < 5) ADD_FAILURE() << "read " << i << " handed back but the CPU predicts an answer";
      continue;
    }
    ++o.answered;
    if (!must && o.wrong_hand_back++ < 5) ADD_FAILURE() << "read " << i << " answered but the CPU predicts a hand-back";
    if (n_out[i] > static_cast<std::uint32_t>(cfg.aln_cap)) {
      if (o.wrong++ < 5) ADD_FAILURE() << "read " << i << ": n_out " << n_out[i] << " (unanswered)";
      continue;
    }
    std::vector<bc::Aln> got;
    for (std::uint32_t a = 0; a < n_out[i]; ++a)
      got.push_back(bc::decode_kernel_aln(aln_out.data() + (i * static_cast<std::size_t>(cfg.aln_cap) + a) * 3));
    const std::vector<bc::Aln> want(ref.begin(i), ref.begin(i) + ref.count(i));
    if (got != want && o.wrong++ < 5) ADD_FAILURE() << "read " << i << " (length " << reads.len[i] << "): hit lists differ";
  }
  EXPECT_EQ(o.wrong, 0u);
  EXPECT_EQ(o.wrong_hand_back, 0u);
  // the output compacted on the device (what search merges) equals the raw output compacted on the CPU
  {
    bc::GpuAlnTimes tp;
    const bc::KernelHits h = g.run_packed(reads, 0, &tp);
    EXPECT_TRUE(std::vector<std::uint32_t>(h.n_out.begin(), h.n_out.end()) == n_out);
    EXPECT_TRUE(std::vector<std::uint64_t>(h.packed.begin(), h.packed.end()) == bc::compact_kernel_output(n_out, aln_out, cfg.aln_cap));
    std::printf("  compacted: %zu entries; upload %.2f ms, pack %.2f ms, compact %.2f ms, download %.2f ms (raw download %.2f ms)\n",
                h.packed.size() / 3, tp.upload_ms, tp.pack_ms, tp.compact_ms, tp.download_ms, t.download_ms);
  }
  // the backend's batch (kernel + CPU for the handed-back reads) equals the CPU's
  const bc::AlnBatch merged = g.search(reads, 0, nullptr);
  EXPECT_EQ(merged.offset, ref.offset);
  EXPECT_TRUE(merged.alns == ref.alns);
  std::printf("  %zu reads: %zu answered, %zu handed back; kernel %.1f ms (%.0f reads/s)\n", reads.size(), o.answered,
              o.handed_back, t.kernel_ms, static_cast<double>(reads.size()) / (t.kernel_ms / 1e3));
  return o;
}

}  // namespace

TEST(BarracudaInexactGpu, EmbeddedKernelEqualsCpuOnEveryRead) {
  EVK_REQUIRE_GPU();
  const bc::ReadCodes reads = bc::inexact_gi_reads(1, false, 60000);
  bc::GpuAligner g(bc::gi_reference_index(), bc::AlnOptions{}, 0);
  const Outcome o = check_gpu(g, reads, bc::AlnOptions{});
  EXPECT_GT(o.answered, 57000u);
}

// The compaction kernels (core/aln_compact.cu) on synthetic outputs against compact_kernel_output:
// no reads, one read, tile edges (2048 reads a tile), more tiles than compact_sums has threads (256),
// n_out 0, at the cap, beyond it, handed back and the poison; nothing written beyond the total.
TEST(BarracudaInexactGpu, CompactionEqualsTheCpuReference) {
  EVK_REQUIRE_GPU();
  EVK_CUDA(cudaSetDevice(0));
  bc::AlnCompactor comp;
  cudaStream_t s = nullptr;
  EVK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::mt19937_64 rng(5);
  struct Case {
    std::size_t n;
    int cap;
  };
  for (const Case c : {Case{0, 16}, Case{1, 16}, Case{2047, 2}, Case{2048, 16}, Case{2049, 1}, Case{5000, 64},
                       Case{2048 * 300 + 5, 2}, Case{262144, 16}}) {
    SCOPED_TRACE("n " + std::to_string(c.n) + " ALN_CAP " + std::to_string(c.cap));
    const std::size_t slot = static_cast<std::size_t>(c.cap) * 3;
    std::vector<std::uint32_t> n_out(c.n);
    std::vector<std::uint64_t> aln_out(c.n * slot);
    for (std::size_t i = 0; i < c.n; ++i) {
      const std::uint64_t r = rng() % 10;
      const std::uint32_t cap = static_cast<std::uint32_t>(c.cap);
      n_out[i] = r == 0 ? bc::kHandedBack : r == 1 ? 0u : r == 2 ? cap : r == 3 ? cap + 1 : r == 4 ? 0xa5a5a5a5u
                                                                                                   : static_cast<std::uint32_t>(rng() % (cap + 1));
      for (std::size_t w = 0; w < slot; ++w) aln_out[i * slot + w] = rng();
    }
    const std::vector<std::uint64_t> want = bc::compact_kernel_output(n_out, aln_out, c.cap);
    std::uint32_t* d_n = nullptr;
    std::uint64_t *d_aln = nullptr, *d_packed = nullptr, *d_total = nullptr;
    const std::size_t room = std::max<std::size_t>(c.n * slot, 3);
    EVK_CUDA(cudaMalloc(&d_n, std::max<std::size_t>(c.n, 1) * 4));
    EVK_CUDA(cudaMalloc(&d_aln, room * 8));
    EVK_CUDA(cudaMalloc(&d_packed, room * 8));
    EVK_CUDA(cudaMalloc(&d_total, 8));
    if (c.n) {
      EVK_CUDA(cudaMemcpy(d_n, n_out.data(), c.n * 4, cudaMemcpyHostToDevice));
      EVK_CUDA(cudaMemcpy(d_aln, aln_out.data(), c.n * slot * 8, cudaMemcpyHostToDevice));
    }
    EVK_CUDA(cudaMemset(d_packed, 0xA5, room * 8));
    EVK_CUDA(cudaMemset(d_total, 0xA5, 8));
    comp.run(d_n, d_aln, c.n, c.cap, d_packed, d_total, s);
    EVK_CUDA(cudaStreamSynchronize(s));
    std::uint64_t total = 0;
    EVK_CUDA(cudaMemcpy(&total, d_total, 8, cudaMemcpyDeviceToHost));
    std::vector<std::uint64_t> got(room);
    EVK_CUDA(cudaMemcpy(got.data(), d_packed, room * 8, cudaMemcpyDeviceToHost));
    EXPECT_EQ(total * 3, want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin())) << "packed entries differ";
    std::size_t touched = 0;
    for (std::size_t w = want.size(); w < room; ++w) touched += got[w] != 0xa5a5a5a5a5a5a5a5ull;
    EXPECT_EQ(touched, 0u) << "words written beyond the total";
    EVK_CUDA(cudaFree(d_n));
    EVK_CUDA(cudaFree(d_aln));
    EVK_CUDA(cudaFree(d_packed));
    EVK_CUDA(cudaFree(d_total));
  }
  EVK_CUDA(cudaStreamDestroy(s));
}

TEST(BarracudaInexactGpu, NvrtcBuildsWithOtherLimitsAndShapes) {
  EVK_REQUIRE_GPU();
  const bc::ReadCodes reads = bc::inexact_gi_reads(2, false, 20000);
  struct Shape {
    int block_w, stack_cap, aln_cap, max_len, tps;
  };
  for (const Shape sh : {Shape{64, 40, 2, 256, 256}, Shape{32, 1023, 16, 200, 128}, Shape{256, 4095, 8, 300, 1024},
                         Shape{1024, 2047, 16, 256, 2048}}) {
    SCOPED_TRACE("BLOCK_W " + std::to_string(sh.block_w) + " STACK_CAP " + std::to_string(sh.stack_cap) + " ALN_CAP " +
                 std::to_string(sh.aln_cap) + " MAX_LEN " + std::to_string(sh.max_len));
    bc::InexactKernelConfig cfg;
    cfg.block_w = sh.block_w;
    cfg.stack_cap = sh.stack_cap;
    cfg.aln_cap = sh.aln_cap;
    cfg.max_len = sh.max_len;
    cfg.threads_per_sm = sh.tps;
    bc::GpuAligner g(bc::gi_reference_index(), bc::AlnOptions{}, 0, cfg);
    check_gpu(g, reads, bc::AlnOptions{});
  }
}

TEST(BarracudaInexactGpu, NonDefaultSearchOptions) {
  EVK_REQUIRE_GPU();
  const bc::ReadCodes reads = bc::inexact_gi_reads(3, false, 20000);
  const bc::AlnOptions o = bct::varied_aln_options();
  bc::GpuAligner g(bc::gi_reference_index(), o, 0);
  check_gpu(g, reads, o);
}

TEST(BarracudaInexactGpu, GiEvaluationPenalisesOnlyWrongKernels) {
  EVK_REQUIRE_GPU();
  auto p = bc::make_inexact_gi_problem();
  auto ev = p->make_evaluation(0, false);
  const evk::gi::Config def = p->default_config();
  int major = 0, minor = 0;
  EVK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  EVK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  auto run = [&](const evk::gi::Config& cfg, const std::string& source) {
    evk::NvrtcRequest req;
    req.source = source;
    req.options = p->compile_options(cfg);
    req.cc = major * 10 + minor;
    const evk::NvrtcResult r = evk::CompileCache().compile(req);
    EXPECT_TRUE(r.ok) << r.log;
    evk::CudaLibrary lib(r.cubin.data());
    ev->poison(nullptr);
    ev->launch(lib.kernel(p->kernel_entry().c_str()), cfg, nullptr);
    return ev->check(nullptr);
  };
  const evk::gi::Check ok = run(def, p->kernel_source());
  EXPECT_EQ(ok.penalty, 0) << ok.summary;
  evk::gi::Config other = def;
  other["BLOCK_W"] = "256";
  other["THREADS_PER_SM"] = "1024";
  EXPECT_EQ(run(other, p->kernel_source()).penalty, 0);
  other["STACK_CAP"] = "1023";  // hands back reads the original answers
  const evk::gi::Check fewer = run(other, p->kernel_source());
  std::printf("  STACK_CAP 1023: %s\n", fewer.summary.c_str());
  // a broken kernel: every mismatch counted as two (scores and counts wrong)
  std::string broken = p->kernel_source();
  const std::string from = "e.n_mm + is_mm, e.n_gapo";
  ASSERT_NE(broken.find(from), std::string::npos);
  broken.replace(broken.find(from), from.size(), "e.n_mm + 2 * is_mm, e.n_gapo");
  const evk::gi::Check bad = run(def, broken);
  EXPECT_GT(bad.penalty, 1000) << bad.summary;
}

namespace {
std::string fastq_of(const bc::ReadCodes& rc, const std::string& prefix, std::size_t first = 0) {
  std::ostringstream o;
  for (std::size_t i = 0; i < rc.size(); ++i) {
    o << "@" << prefix << (first + i) << "\n";
    for (std::uint32_t j = 0; j < rc.len[i]; ++j) o << "ACGTN"[rc.codes[rc.offset[i] + j]];
    o << "\n+\n" << std::string(rc.len[i], 'I') << "\n";
  }
  return o.str();
}
std::string body(const std::string& s) {
  std::string o;
  std::size_t p = 0;
  while (p < s.size()) {
    std::size_t e = s.find('\n', p);
    if (e == std::string::npos) e = s.size();
    if (s[p] != '@') o += s.substr(p, e - p + 1);
    p = e + 1;
  }
  return o;
}
}  // namespace

TEST(BarracudaInexactGpu, ToolGpuPathEqualsCpuPathSingleAndPaired) {
  EVK_REQUIRE_GPU();
  const auto tool = evk::testing::bin_dir() / "barracuda_exact";
  if (!std::filesystem::exists(tool)) GTEST_SKIP() << "tool missing";
  evk::testing::TempDir dir;
  // the GI reference as FASTA
  const bc::BwtIndex& idx = bc::gi_reference_index();
  {
    std::ofstream fa(dir / "ref.fa");
    for (const auto& c : idx.contigs) {
      fa << ">" << c.name << "\n";
      for (std::int32_t i = 0; i < c.len; ++i) {
        fa << "ACGT"[idx.pac_base(c.offset + i)];
        if (i % 60 == 59 || i + 1 == c.len) fa << "\n";
      }
    }
  }
  const bc::ReadCodes se = bc::inexact_gi_reads(7, true, 30000);
  std::ofstream(dir / "se.fq") << fastq_of(se, "r");
  // pairs: fragments of ~300 bp, read 2 reverse-complemented, errors from the sampler's mix
  std::mt19937_64 rng(8);
  std::ostringstream o1, o2;
  const bc::ReadCodes e1 = bc::inexact_gi_reads(9, true, 20000), e2 = bc::inexact_gi_reads(10, true, 20000);
  for (std::size_t i = 0; i < 20000; ++i) {
    const std::size_t f = 250 + rng() % 100, start = rng() % (static_cast<std::size_t>(idx.l_pac) - f);
    std::string a, b;
    for (std::size_t j = 0; j < 100; ++j) a += "ACGT"[idx.pac_base(static_cast<std::int64_t>(start + j))];
    for (std::size_t j = 0; j < 100; ++j) b += "TGCA"[idx.pac_base(static_cast<std::int64_t>(start + f - 1 - j))];
    if (rng() % 10 == 0) for (int k = 0; k < 9; ++k) b[static_cast<std::size_t>(k) * 11 + rng() % 11] = "ACGT"[rng() & 3];  // rescue
    if (rng() % 20 == 0) {  // an unrelated end from the sampler
      b.clear();
      for (std::uint32_t j = 0; j < e2.len[i]; ++j) b += "ACGTN"[e2.codes[e2.offset[i] + j]];
    }
    if (rng() % 3 == 0) a[rng() % 100] = "ACGT"[rng() & 3];
    o1 << "@p" << i << "/1\n" << a << "\n+\n" << std::string(a.size(), 'I') << "\n";
    o2 << "@p" << i << "/2\n" << b << "\n+\n" << std::string(b.size(), 'I') << "\n";
  }
  (void)e1;
  std::ofstream(dir / "p1.fq") << o1.str();
  std::ofstream(dir / "p2.fq") << o2.str();
  const std::string ref = (dir / "ref.fa").string();
  auto x = evk::testing::run_tool("barracuda_exact", "index " + ref);
  ASSERT_EQ(x.exit_code, 0) << x.err;
  for (const std::string& reads : {(dir / "se.fq").string(), (dir / "p1.fq").string() + " " + (dir / "p2.fq").string()}) {
    SCOPED_TRACE(reads);
    auto gpu = evk::testing::run_tool("barracuda_exact", "map --backend gpu -v " + ref + " " + reads + " -o -");
    auto cpu = evk::testing::run_tool("barracuda_exact", "map --backend cpu " + ref + " " + reads + " -o -");
    ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    EXPECT_GT(body(cpu.out).size(), 1000000u);
    EXPECT_TRUE(body(gpu.out) == body(cpu.out));
    std::printf("  %s", gpu.err.c_str());
  }
}

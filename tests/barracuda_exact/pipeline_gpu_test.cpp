// GPU side of the `map` pipeline: GpuStreams driven concurrently from several host threads give
// the CPU backend's (k, l) and text positions (sa_lookup) on every read (outputs poisoned first, odd batch sizes, mixed lengths
// up to 1024, non-default kernel configurations through NVRTC); the whole pipeline with several
// streams per GPU and with every GPU of the host (--devices) writes SAM/BAM/unmatched output
// byte-identical to the CPU backend's serial path. The same for single-end inexact mapping (bwa aln +
// samse: the inexact kernel in every lane, hit positions looked up on the GPU: GpuHitRows equals
// BwtIndex::sa_at on every row), and for paired inexact mapping (bwa aln + sampe: both ends searched
// in each lane, sampe taking the hit positions found on the GPU). Exact comparisons: integer
// results, no tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <thread>

#include "aln_oracle.hpp"
#include "core/aln_gpu.hpp"
#include "core/aln_positions.hpp"
#include "core/gpu_exact.hpp"
#include "core/kernel_config.hpp"
#include "core/match.hpp"
#include "evk/device.hpp"
#include "evk_testing.hpp"
#include "io/index_files.hpp"
#include "map/map_run.hpp"
#include "serial_map.hpp"
#include "io/sequences.hpp"
#include "pipeline_inputs.hpp"
#include "test_util.hpp"

namespace bc = evk::barracuda_exact;
namespace fs = std::filesystem;
using evk::testing::TempDir;

namespace {

// Reads of mixed lengths (1..1024) from the reference text, some reverse-complemented, some with
// a substitution or an N, some random.
bc::ReadCodes sample_reads(const std::string& fwd, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  bc::ReadCodes rc;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t len = i % 97 == 0 ? 1024 : 1 + rng() % 300;
    std::string s = rng() % 10 == 0 ? bct::random_dna(rng, len) : fwd.substr(rng() % (fwd.size() - len), len);
    if (i % 5 == 1) s = fwd.substr(1000 + rng() % 60, 30 + rng() % 60);    // 4 copies (one reverse-complemented)
    if (i % 5 == 2) s = fwd.substr(12000 + rng() % 40, 20 + rng() % 70);   // 7 copies
    if (rng() % 4 == 0) s = bct::revcomp(s);
    if (rng() % 7 == 0) s[rng() % s.size()] = "ACGTN"[rng() % 5];  // (s may be shorter than len here)
    rc.add(s.data(), s.size());
  }
  return rc;
}

struct Fixture {
  TempDir dir;
  std::string ref, fwd;
  bc::BwtIndex idx;
  explicit Fixture(std::uint64_t seed) {
    const auto r = bct::tricky_reference(seed);
    idx = bc::build_index(r);
    ref = (dir / "t.fa").string();
    bct::write_fasta(ref, r);
    bc::write_index(idx, ref);
    fwd = bct::forward_text(idx);
  }
};

struct Out {
  std::string main, unmatched;
};
Out run(const std::string& ref, const fs::path& reads, const TempDir& dir, const std::string& name, bool gpu,
        bool serial, const std::vector<bc::GpuPlan>& gpus, int streams, std::size_t batch, int threads) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = reads.string();
  o.out = (dir / name).string();
  o.unmatched = (dir / (name + ".un.fq.gz")).string();
  o.command_line = "test";
  o.gpu = gpu;
  o.gpus = gpus;
  o.streams = streams;
  o.batch_reads = batch;
  o.threads = threads;
  if (serial) bct::serial_map(o, true);
  else bc::run_map(o, {}, bct::poison_gpu);
  Out r{bct::read_file(o.out), bct::read_file(o.unmatched)};
  fs::remove(o.out);
  fs::remove(o.unmatched);
  return r;
}

// Single-end inexact mapping through the pipeline (no --unmatched: the CLI's inexact mode has none).
std::string run_inexact(const std::string& ref, const fs::path& reads, const TempDir& dir, const std::string& name, bool gpu,
                        bool serial, const std::vector<int>& devices, int streams, std::size_t batch, int threads) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = reads.string();
  o.out = (dir / name).string();
  o.command_line = "test";
  o.inexact = true;
  o.gpu = gpu;
  for (int d : devices) o.gpus.push_back(bc::GpuPlan{d, {}, {}});
  o.streams = streams;
  o.batch_reads = batch;
  o.threads = threads;
  if (serial) bct::serial_map(o, true);
  else bc::run_map(o, {}, bct::poison_gpu);
  std::string r = bct::read_file(o.out);
  fs::remove(o.out);
  return r;
}

// Paired inexact mapping (bwa aln + sampe) through the pipeline (map/map_run.cpp).
std::string run_pairs(const std::string& ref, const fs::path& r1, const fs::path& r2, const TempDir& dir,
                      const std::string& name, bool gpu, bool serial, const std::vector<int>& devices, int streams,
                      std::size_t batch, int threads) {
  bc::MapOptions o;
  o.ref = ref;
  o.reads = r1.string();
  o.reads2 = r2.string();
  o.out = (dir / name).string();
  o.command_line = "test";
  o.inexact = true;
  o.gpu = gpu;
  for (int d : devices) o.gpus.push_back(bc::GpuPlan{d, {}, {}});
  o.streams = streams;
  o.batch_reads = batch;
  o.threads = threads;
  if (serial) bct::serial_map(o, true);
  else bc::run_map(o, {}, bct::poison_gpu);
  std::string r = bct::read_file(o.out);
  fs::remove(o.out);
  return r;
}

}  // namespace

TEST(BarracudaPipelineGpu, ConcurrentStreamsMatchTheCpuOnEveryRead) {
  EVK_REQUIRE_GPU();
  Fixture fx(51);
  const std::vector<std::string> configs = {"", "direct_index=false sequence_global=false",
                                            "kl_par=true direct_global_bwt=true cache_global_bwt=false"};
  const std::vector<std::size_t> sizes = {1, 31, 33, 4097, 65536 + 5};
  for (const auto& text : configs) {
    bc::GpuDevice dev(fx.idx, bc::validate_kernel_config(bc::parse_config_text(text)), 0);
    std::vector<std::unique_ptr<bc::GpuStream>> streams;
    for (int s = 0; s < 3; ++s) {
      streams.push_back(std::make_unique<bc::GpuStream>(dev));
      streams.back()->poison_outputs = true;
    }
    std::vector<std::thread> ts;
    std::vector<std::string> errors(streams.size());
    std::vector<std::array<int, 6>> hits_seen(streams.size(), std::array<int, 6>{});
    for (std::size_t s = 0; s < streams.size(); ++s)
      ts.emplace_back([&, s] {
        for (std::size_t k = 0; k < sizes.size(); ++k) {  // each stream a different batch at a time
          const std::size_t n = sizes[(k + s) % sizes.size()];
          const bc::ReadCodes rc = sample_reads(fx.fwd, n, 1000 * s + k);
          std::uint32_t max_len = 1;
          for (auto l : rc.len) max_len = std::max(max_len, l);
          const std::uint32_t stride = bc::packed_stride(max_len);
          streams[s]->reserve(n, stride);
          bc::pack_reads_range(rc, stride, 0, n, streams[s]->host_words());
          std::copy(rc.len.begin(), rc.len.end(), streams[s]->host_lens());
          const bc::KL* kl = streams[s]->run(n, stride);
          const std::uint64_t* sa = streams[s]->sa_rows();
          int wrong = 0, wrong_pos = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const bc::KL want = bc::match_exact(fx.idx, rc.codes.data() + rc.offset[i], rc.len[i]);
            // a read with an ambiguous base: k = 0 is the answer, l is left undefined by the kernel
            wrong += want.k == 0 ? kl[i].k != 0 : !(kl[i] == want);
            if (!want.hit() || !sa) continue;
            // the GPU's text positions of rows k .. k + min(count, 4) - 1 (row k alone beyond 4 hits)
            const std::uint64_t rows = want.count() <= 4 ? want.count() : 1;
            for (std::uint64_t j = 0; j < rows; ++j) wrong_pos += sa[i * bc::kSaRowsPerHit + j] != fx.idx.sa_at(want.k + j);
            ++hits_seen[s][std::min<std::uint64_t>(want.count(), 5)];
          }
          if (!sa) errors[s] += "no positions from the GPU; ";
          if (wrong) errors[s] += std::to_string(wrong) + " of " + std::to_string(n) + " reads differ; ";
          if (wrong_pos) errors[s] += std::to_string(wrong_pos) + " positions differ; ";
        }
      });
    for (auto& t : ts) t.join();
    for (const auto& e : errors) EXPECT_EQ(e, "") << "config '" << text << "'";
    std::array<int, 6> seen{};
    for (const auto& h : hits_seen)
      for (std::size_t c = 0; c < 6; ++c) seen[c] += h[c];
    EXPECT_GT(seen[1], 0) << "no unique hit";
    EXPECT_GT(seen[2] + seen[3] + seen[4], 0) << "no read with 2-4 hits (all rows on the GPU)";
    EXPECT_GT(seen[5], 0) << "no read with more than 4 hits";
  }
}

// The pipeline on the GPU with 1, 2 and 4 streams (batches of 777 reads: many in flight, finishing
// out of order) and with an NVRTC configuration equals the CPU backend's serial path byte for byte.
TEST(BarracudaPipelineGpu, StreamsGiveTheCpuBackendsBytes) {
  EVK_REQUIRE_GPU();
  Fixture fx(52);
  const std::string text = bct::varied_reads(fx.fwd, 20000, 3);
  const fs::path fq = fx.dir / "v.fq.gz";
  ASSERT_TRUE(bct::write_bgzf(fq, text));
  const Out want = run(fx.ref, fq, fx.dir, "cpu.sam", false, true, {}, 1, 1000, 1);
  const Out want_bam = run(fx.ref, fq, fx.dir, "cpu.bam", false, true, {}, 1, 1000, 1);
  ASSERT_GT(want.main.size(), 1000000u);
  for (int streams : {1, 2, 4}) {
    const Out got = run(fx.ref, fq, fx.dir, "gpu.sam", true, false, {bc::GpuPlan{0, {}, {}}}, streams, 777, 4);
    EXPECT_TRUE(got.main == want.main) << streams << " streams";
    EXPECT_TRUE(got.unmatched == want.unmatched) << streams << " streams";
    EXPECT_TRUE(run(fx.ref, fq, fx.dir, "gpu.bam", true, false, {bc::GpuPlan{0, {}, {}}}, streams, 4096, 4).main == want_bam.main)
        << streams << " streams (BAM)";
  }
  const bc::GpuPlan evolved{0, bc::parse_config_text("kl_par=true direct_global_bwt=true cache_global_bwt=false"), {}};
  EXPECT_TRUE(run(fx.ref, fq, fx.dir, "gpu.sam", true, false, {evolved}, 3, 1500, 4).main == want.main) << "NVRTC config";
  // the serial path on the GPU too
  EXPECT_TRUE(run(fx.ref, fq, fx.dir, "gpus.sam", true, true, {bc::GpuPlan{0, {}, {}}}, 1, 1000, 1).main == want.main);
}

// Every GPU of the host shares the batches (needs two or more GPUs; skipped otherwise).
TEST(BarracudaPipelineGpu, SeveralDevicesGiveTheCpuBackendsBytes) {
  EVK_REQUIRE_GPU();
  const auto& env = evk::gpu_environment();
  if (env.devices.size() < 2) GTEST_SKIP() << "one GPU only: the multi-device path needs two or more";
  Fixture fx(53);
  const std::string text = bct::varied_reads(fx.fwd, 30000, 4);
  const fs::path fq = fx.dir / "v.fq";
  bct::write_file(fq, text);
  const Out want = run(fx.ref, fq, fx.dir, "cpu.sam", false, true, {}, 1, 1000, 1);
  std::vector<bc::GpuPlan> all;
  for (const auto& d : env.devices) all.push_back(bc::GpuPlan{d.index, {}, {}});
  for (int streams : {1, 2}) {
    const Out got = run(fx.ref, fq, fx.dir, "multi.sam", true, false, all, streams, 500, 8);
    EXPECT_TRUE(got.main == want.main) << env.devices.size() << " GPUs, " << streams << " streams each";
    EXPECT_TRUE(got.unmatched == want.unmatched);
  }
  // through the CLI: --devices all and --devices 1,0 against --backend cpu
  const std::string args = fx.ref + " " + fq.string() + " -o -";
  const auto cpu = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu " + args);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  for (const char* d : {"all", "1,0"}) {
    const auto gpu = evk::testing::run_tool("barracuda_exact", std::string("map --exact --backend gpu --devices ") + d + " " + args);
    ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
    EXPECT_TRUE(bct::sam_records(gpu.out) == bct::sam_records(cpu.out)) << "--devices " << d;
  }
}

// A larger real-genome run when the data is there: 300,000 simulated E. coli reads, exact and inexact.
TEST(BarracudaPipelineGpu, EcoliReadsOnTheGpuEqualTheCpuBackend) {
  EVK_REQUIRE_GPU();
  const fs::path g = evk::testing::project_data_dir() / "genomes" / "NC_008253.fna.gz";
  if (!fs::exists(g)) GTEST_SKIP() << "no E. coli genome";
  TempDir dir;
  const std::string fa = (dir / "ecoli.fa").string();
  const auto ref = bc::read_reference(g.string());
  bct::write_fasta(fa, ref);
  const bc::BwtIndex idx = bc::build_index(ref);
  bc::write_index(idx, fa);
  const std::string fwd = bct::forward_text(idx);
  std::mt19937_64 rng(8);
  std::string text;
  for (int i = 0; i < 300000; ++i) {
    std::string s = fwd.substr(rng() % (fwd.size() - 100), 100);
    if (rng() % 100 < 15) s[rng() % 100] = "ACGT"[rng() & 3];
    if (rng() & 1) s = bct::revcomp(s);
    text += "@e" + std::to_string(i) + "\n" + s + "\n+\n" + std::string(100, 'F') + "\n";
  }
  ASSERT_TRUE(bct::write_bgzf(dir / "e.fq.gz", text));
  const Out want = run(fa, dir / "e.fq.gz", dir, "cpu.bam", false, false, {}, 1, 65536, 0);
  const Out got = run(fa, dir / "e.fq.gz", dir, "gpu.bam", true, false, {bc::GpuPlan{0, {}, {}}}, 3, 65536, 0);
  EXPECT_TRUE(got.main == want.main);
  EXPECT_TRUE(got.unmatched == want.unmatched);
  // inexact single end (bwa aln + samse) on the same reads: 3 streams against the CPU backend
  EXPECT_TRUE(run_inexact(fa, dir / "e.fq.gz", dir, "gpu_aln.bam", true, false, {0}, 3, 0, 0) ==
              run_inexact(fa, dir / "e.fq.gz", dir, "cpu_aln.bam", false, false, {}, 1, 0, 0))
      << "inexact";
}

// The hits' text positions on the GPU (GpuHitRows, poisoned first) equal BwtIndex::sa_at for every
// row of every read with 1..4 rows in all, and are ~0 for the rest; on the inexact search's real hits
// (planted reads with differences, repeats) in batches of odd sizes.
TEST(BarracudaPipelineGpu, HitPositionsOnTheGpuEqualTheHostLookup) {
  EVK_REQUIRE_GPU();
  Fixture fx(54);
  bct::planted_reads(fx.ref, fx.dir / "p.fq", 6000, 30, 200, 5, bct::tricky_repeats());
  bc::ReadSource src((fx.dir / "p.fq").string());
  bc::ReadBatch reads;
  bc::AlnOptions opt;
  bc::GpuAligner aligner(fx.idx, opt, 0);
  bc::GpuHitRows rows(fx.idx, aligner.device().bwt(), 0);
  ASSERT_TRUE(rows.available()) << "built without the sa_lookup fatbin";
  rows.poison_outputs = true;
  std::uint64_t looked_up = 0, multi = 0, skipped = 0;
  for (std::size_t batch : {std::size_t(1), std::size_t(333), std::size_t(4097)}) {
    if (!src.next(reads, batch, ~std::size_t{0} >> 1, 1024)) break;
    const bc::AlnBatch alns = bc::aln_search_batch(fx.idx, reads.codes, opt, 2);
    std::vector<std::uint64_t> pos;
    rows.lookup(alns, pos);
    ASSERT_EQ(pos.size(), alns.alns.size() * bc::kKnownRows);
    for (std::size_t i = 0; i < alns.size(); ++i) {
      std::uint64_t n_rows = 0;
      for (std::uint32_t e = alns.offset[i]; e < alns.offset[i + 1]; ++e) n_rows += alns.alns[e].l - alns.alns[e].k + 1;
      for (std::uint32_t e = alns.offset[i]; e < alns.offset[i + 1]; ++e) {
        const bc::Aln& a = alns.alns[e];
        for (std::uint64_t j = 0; j < bc::kKnownRows; ++j) {
          const std::uint64_t got = pos[e * bc::kKnownRows + j];
          if (n_rows <= bc::kKnownRows && a.k + j <= a.l) {
            ASSERT_EQ(got, fx.idx.sa_at(a.k + j)) << "read " << i << " row " << a.k + j;
            ++looked_up;
          } else {
            ASSERT_EQ(got, ~0ull) << "read " << i << " slot " << j;
          }
        }
      }
      multi += n_rows >= 2 && n_rows <= bc::kKnownRows;
      skipped += n_rows > bc::kKnownRows;
    }
  }
  EXPECT_GT(looked_up, 3000u);
  EXPECT_GT(multi, 10u) << "no read with 2-4 rows";
  EXPECT_GT(skipped, 10u) << "no read with more than 4 rows";
}

// Without device memory for a batch's intervals the lookup leaves them to the host (all ~0, no
// error); with room again it looks them up. The device is filled with allocations first.
TEST(BarracudaPipelineGpu, HitPositionsWithoutRoomAreLeftToTheHost) {
  EVK_REQUIRE_GPU();
  Fixture fx(56);
  bct::planted_reads(fx.ref, fx.dir / "p.fq", 2000, 30, 100, 5);
  bc::ReadSource src((fx.dir / "p.fq").string());
  bc::ReadBatch reads;
  ASSERT_TRUE(src.next(reads, 2000, ~std::size_t{0} >> 1, 1024));
  const bc::AlnOptions opt;
  const bc::AlnBatch one = bc::aln_search_batch(fx.idx, reads.codes, opt, 2);
  bc::AlnBatch many;  // the same hits 64 times: ~1.5 MiB of intervals and positions a copy
  for (int c = 0; c < 64; ++c) {
    const std::uint32_t base = many.offset.back();
    many.alns.insert(many.alns.end(), one.alns.begin(), one.alns.end());
    for (std::size_t i = 1; i < one.offset.size(); ++i) many.offset.push_back(base + one.offset[i]);
  }
  ASSERT_GT(many.alns.size(), 50000u);
  bc::GpuAligner aligner(fx.idx, opt, 0);
  bc::GpuHitRows rows(fx.idx, aligner.device().bwt(), 0);
  ASSERT_TRUE(rows.available());
  std::vector<void*> held;
  for (std::size_t chunk : {std::size_t{1} << 30, std::size_t{1} << 26, std::size_t{1} << 20}) {
    void* p = nullptr;
    while (cudaMalloc(&p, chunk) == cudaSuccess) held.push_back(p);
    cudaGetLastError();
  }
  std::vector<std::uint64_t> pos;
  EXPECT_NO_THROW(rows.lookup(many, pos));
  for (void* p : held) cudaFree(p);
  ASSERT_EQ(pos.size(), many.alns.size() * bc::kKnownRows);
  EXPECT_EQ(std::count(pos.begin(), pos.end(), ~0ull), static_cast<std::ptrdiff_t>(pos.size()));
  rows.lookup(many, pos);
  std::uint64_t found = 0;
  for (std::size_t e = 0; e < many.alns.size(); ++e)
    for (std::uint64_t j = 0; j < bc::kKnownRows; ++j)
      if (pos[e * bc::kKnownRows + j] != ~0ull) {
        ASSERT_EQ(pos[e * bc::kKnownRows + j], fx.idx.sa_at(many.alns[e].k + j));
        ++found;
      }
  EXPECT_GT(found, 50000u);
}

// Inexact single-end mapping on the GPU with 1, 2 and 4 streams (small batches: many in flight,
// finishing out of order), and the serial path on the GPU, equals the CPU backend byte for byte.
TEST(BarracudaPipelineGpu, InexactStreamsGiveTheCpuBackendsBytes) {
  EVK_REQUIRE_GPU();
  Fixture fx(55);
  bct::planted_reads(fx.ref, fx.dir / "p.fq", 8000, 20, 260, 3, bct::tricky_repeats());
  const std::string text = bct::read_file(fx.dir / "p.fq") + bct::varied_reads(fx.fwd, 4000, 3);
  const fs::path fq = fx.dir / "v.fq.gz";
  ASSERT_TRUE(bct::write_bgzf(fq, text));
  const std::string want = run_inexact(fx.ref, fq, fx.dir, "cpu.sam", false, true, {}, 1, 0, 1);
  const std::string want_bam = run_inexact(fx.ref, fq, fx.dir, "cpu.bam", false, true, {}, 1, 0, 1);
  ASSERT_GT(bct::sam_records(want).size(), 11000u);
  for (int streams : {1, 2, 4}) {
    EXPECT_TRUE(run_inexact(fx.ref, fq, fx.dir, "gpu.sam", true, false, {0}, streams, 777, 4) == want) << streams << " streams";
    EXPECT_TRUE(run_inexact(fx.ref, fq, fx.dir, "gpu.bam", true, false, {0}, streams, 0, 4) == want_bam)
        << streams << " streams (BAM)";
  }
  EXPECT_TRUE(run_inexact(fx.ref, fq, fx.dir, "gpus.sam", true, true, {0}, 1, 0, 1) == want) << "serial path on the GPU";
  // every GPU of the host sharing the batches, when there are two or more
  const auto& env = evk::gpu_environment();
  if (env.devices.size() >= 2) {
    std::vector<int> all;
    for (const auto& d : env.devices) all.push_back(d.index);
    EXPECT_TRUE(run_inexact(fx.ref, fq, fx.dir, "multi.sam", true, false, all, 2, 500, 8) == want) << "all GPUs";
    const auto cpu = evk::testing::run_tool("barracuda_exact", "map --backend cpu " + fx.ref + " " + fq.string() + " -o -");
    const auto gpu = evk::testing::run_tool("barracuda_exact", "map --backend gpu --devices all " + fx.ref + " " + fq.string() + " -o -");
    ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
    EXPECT_TRUE(bct::sam_records(gpu.out) == bct::sam_records(cpu.out)) << "--devices all";
  }
}

// A GPU without room for the index (an artificial cap, --gpu-memory): one stderr line and the CPU
// backend's records; with --backend gpu the same is an error (exit 2, one line, no output).
TEST(BarracudaPipelineGpu, NoRoomForTheIndexMapsOnTheCpu) {
  EVK_REQUIRE_GPU();
  Fixture fx(57);
  const std::string text = bct::varied_reads(fx.fwd, 3000, 5);
  const fs::path fq = fx.dir / "r.fq";
  bct::write_file(fq, text);
  const std::string args = fx.ref + " " + fq.string() + " -o -";
  const auto cpu = evk::testing::run_tool("barracuda_exact", "map --backend cpu " + args);
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  for (const char* mode : {"", "--exact "}) {
    const auto r = evk::testing::run_tool("barracuda_exact", std::string("map ") + mode + "--gpu-memory 1K " + args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("the index needs"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("mapped on the CPU"), std::string::npos) << r.err;
    if (*mode == 0) {
      EXPECT_TRUE(bct::sam_records(r.out) == bct::sam_records(cpu.out)) << "capped run differs from the CPU backend";
    }
    const fs::path out = fx.dir / "forced.sam";
    const auto forced = evk::testing::run_tool("barracuda_exact", std::string("map ") + mode + "--backend gpu --gpu-memory 1K " + fx.ref +
                                                                   " " + fq.string() + " -o " + out.string());
    EXPECT_EQ(forced.exit_code, 2) << forced.err;
    EXPECT_NE(forced.err.find("--backend gpu"), std::string::npos) << forced.err;
    EXPECT_EQ(std::count(forced.err.begin(), forced.err.end(), '\n'), 1) << forced.err;
    EXPECT_FALSE(fs::exists(out));
  }
  const auto big = evk::testing::run_tool("barracuda_exact", "map --gpu-memory 64G " + args);  // room: the GPU maps
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(big.err.find("mapped on the CPU"), std::string::npos) << big.err;
  EXPECT_TRUE(bct::sam_records(big.out) == bct::sam_records(cpu.out));
}

// Paired inexact mapping on the GPU with 1, 2 and 3 streams (batches of 333 pairs: many in flight,
// each with its own insert-size estimate; and bwa's batch), and the serial path on the GPU, equals
// the CPU backend's serial path byte for byte (SAM and BAM); every GPU of the host when there are two.
TEST(BarracudaPipelineGpu, InexactPairsGiveTheCpuBackendsBytes) {
  EVK_REQUIRE_GPU();
  Fixture fx(56);
  bct::planted_pairs(fx.ref, fx.dir / "q", 6000, 100, 320, 4, bct::tricky_repeats());
  const fs::path r1 = fx.dir / "q1.fq.gz", r2 = fx.dir / "q2.fq";
  ASSERT_TRUE(bct::write_bgzf(r1, bct::read_file(fx.dir / "q1.fq")));
  for (std::size_t batch : {std::size_t(333), std::size_t(0)}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const std::string want = run_pairs(fx.ref, r1, r2, fx.dir, "cpu.sam", false, true, {}, 1, batch, 1);
    const std::string want_bam = run_pairs(fx.ref, r1, r2, fx.dir, "cpu.bam", false, true, {}, 1, batch, 1);
    const auto recs = bct::sam_records(want);
    ASSERT_EQ(recs.size(), 12000u);
    int proper = 0, rescued = 0;
    for (const auto& r : recs) {
      proper += (std::stoi(r[1]) & 2) != 0;
      for (std::size_t k = 11; k < r.size(); ++k) rescued += r[k] == "XT:A:M";
    }
    EXPECT_GT(proper, 9000);
    EXPECT_GT(rescued, 100);
    for (int streams : {1, 2, 3}) {
      EXPECT_TRUE(run_pairs(fx.ref, r1, r2, fx.dir, "gpu.sam", true, false, {0}, streams, batch, 4) == want)
          << streams << " streams";
      EXPECT_TRUE(run_pairs(fx.ref, r1, r2, fx.dir, "gpu.bam", true, false, {0}, streams, batch, 3) == want_bam)
          << streams << " streams (BAM)";
    }
    EXPECT_TRUE(run_pairs(fx.ref, r1, r2, fx.dir, "gpus.sam", true, true, {0}, 1, batch, 1) == want) << "serial path on the GPU";
    const auto& env = evk::gpu_environment();
    if (env.devices.size() >= 2) {
      std::vector<int> all;
      for (const auto& d : env.devices) all.push_back(d.index);
      EXPECT_TRUE(run_pairs(fx.ref, r1, r2, fx.dir, "multi.sam", true, false, all, 2, batch, 8) == want) << "all GPUs";
    }
  }
  // the CLI: --devices all with pairs
  const auto cpu = evk::testing::run_tool("barracuda_exact", "map --backend cpu " + fx.ref + " " + r1.string() + " " +
                                                                 r2.string() + " -o -");
  const auto gpu = evk::testing::run_tool("barracuda_exact", "map --backend gpu --devices all --streams 3 " + fx.ref + " " +
                                                                 r1.string() + " " + r2.string() + " -o -");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  EXPECT_TRUE(bct::sam_records(gpu.out) == bct::sam_records(cpu.out)) << "the CLI, --devices all";
}

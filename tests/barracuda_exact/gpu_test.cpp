// GPU: the BarraCUDA kernel against the CPU backend on every read, outputs poisoned first —
// the embedded default, the distinct programs of the whole option space (every one at BLOCK_W=64,
// a pairwise cover at every other BLOCK_W, optionally a sweep of the rest; NVRTC), long and mixed
// reads, the GI problem's evaluation, and the tool's GPU path against its CPU path. Evolved genomes:
// gpu_evolved_test.cpp.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "gi/gi_problem.hpp"
#include "core/gpu_exact.hpp"
#include "core/hits.hpp"
#include "core/kernel_config.hpp"
#include "core/kernel_coverage.hpp"
#include "core/kernel_space.hpp"
#include "gi/kernel_variant.hpp"
#include "core/match.hpp"
#include "evk/cuda_check.hpp"
#include "evk/error.hpp"
#include "evk/gi/genome.hpp"
#include "evk_kernels/barracuda_exact_kernel.hpp"
#include "evk_testing.hpp"
#include "gpu_kernel_run.hpp"

namespace bc = evk::barracuda_exact;

namespace bct {

// Runs kernel k with cfg over the reads: poisoned output, launch, copy back.
std::vector<bc::KL> run_kernel(cudaKernel_t k, const evk::gi::Config& cfg, const bc::DeviceBwt& bwt, const bc::PackedReads& p) {
  bc::DeviceReads dr;
  dr.upload(p, nullptr);
  bc::ExactArgs a;
  a.bwt = bwt.data();
  a.consts = bwt.consts();
  dr.fill_args(a);
  EVK_CUDA(cudaMemset(a.kl, 0xA5, p.size() * 16));
  bc::launch_exact(k, cfg, a, nullptr);
  EVK_CUDA(cudaDeviceSynchronize());
  std::vector<bc::KL> out(p.size());
  EVK_CUDA(cudaMemcpy(out.data(), a.kl, p.size() * 16, cudaMemcpyDeviceToHost));
  return out;
}

int mismatches(const std::vector<bc::KL>& a, const std::vector<bc::KL>& b) {
  int n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += !(a[i] == b[i]);
  return n;
}

}  // namespace bct

namespace {

using bct::mismatches;
using bct::run_kernel;

std::string cfg_text(const evk::gi::Config& c) {
  std::string s;
  const auto d = bc::default_kernel_config();
  for (const auto& [k, v] : c)
    if (d.at(k) != v) s += k + "=" + v + " ";
  return s.empty() ? "(defaults)" : s;
}


// NVRTC in `procs` forked processes (only NVRTC and files in the children; no CUDA): one cubin per
// options list, empty when the compile failed. Processes, not threads, so NVRTC's own locking does
// not serialise the compiles.
struct CompileJob {
  std::vector<pid_t> kids;
  std::filesystem::path dir;
  std::size_t n = 0;
};

CompileJob start_compiles(const std::string& src, const std::vector<std::vector<std::string>>& opts, int cc, int procs,
                          const std::filesystem::path& dir) {
  std::fflush(stdout);
  std::fflush(stderr);
  CompileJob job;
  job.dir = dir;
  job.n = opts.size();
  std::filesystem::create_directories(dir);
  for (int r = 0; r < procs; ++r) {
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      try {
      for (std::size_t i = static_cast<std::size_t>(r); i < opts.size(); i += static_cast<std::size_t>(procs)) {
        evk::NvrtcRequest req;
        req.source = src;
        req.options = opts[i];
        req.cc = cc;
        const auto res = evk::nvrtc_compile(req);
        const auto f = dir / (std::to_string(i) + (res.ok ? ".cubin" : ".log"));
        std::ofstream(f, std::ios::binary).write(res.ok ? res.cubin.data() : res.log.data(),
                                                 static_cast<std::streamsize>(res.ok ? res.cubin.size() : res.log.size()));
      }
      } catch (...) {
        _exit(1);
      }
      _exit(0);
    }
    job.kids.push_back(pid);
  }
  return job;
}

std::vector<std::vector<char>> finish_compiles(CompileJob& job) {
  for (pid_t k : job.kids) {
    int st = 0;
    waitpid(k, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) throw std::runtime_error("a compile process failed");
  }
  job.kids.clear();
  std::vector<std::vector<char>> out(job.n);
  for (std::size_t i = 0; i < job.n; ++i) {
    const auto f = job.dir / (std::to_string(i) + ".cubin");
    std::ifstream in(f, std::ios::binary);
    if (in) out[i].assign(std::istreambuf_iterator<char>(in), {});
    std::filesystem::remove(f);
  }
  return out;
}

std::vector<std::vector<char>> compile_in_processes(const std::string& src, const std::vector<std::vector<std::string>>& opts,
                                                    int cc, int procs, const std::filesystem::path& dir) {
  CompileJob job = start_compiles(src, opts, cc, procs, dir);
  return finish_compiles(job);
}

}  // namespace

TEST(BarracudaGpu, EmbeddedDefaultMatchesCpuOnEveryRead) {
  EVK_REQUIRE_GPU();
  const auto& d = evk::gpu_environment().devices[0];
  const bc::BwtIndex& idx = bc::gi_reference_index();
  const bc::ReadCodes rc = bc::gi_sample_reads(1, false, static_cast<std::size_t>(d.sm_count) * 1024);
  const auto ref = bc::match_cpu(idx, rc);
  bc::PackedReads p;
  bc::pack_reads(rc, p);
  ASSERT_GT(barracuda_exact_kernel().fatbin_size, 0u);
  bc::GpuMatcher m(idx, bc::default_kernel_config(), 0);
  const auto got = m.match(p);
  EXPECT_EQ(mismatches(ref, got), 0);
  std::size_t hits = 0, reps = 0, ns = 0;
  for (const auto& kl : ref) {
    hits += kl.hit();
    reps += kl.count() > 1;
    ns += kl.k == 0;
  }
  EXPECT_GT(hits, ref.size() / 2);
  EXPECT_GT(reps, 100u);
  EXPECT_GT(ns, 100u);
  std::printf("%zu reads: %zu hits, %zu repeats, %zu with N\n", ref.size(), hits, reps, ns);
}

TEST(BarracudaGpu, LongAndMixedReads) {
  EVK_REQUIRE_GPU();
  const bc::BwtIndex& idx = bc::gi_reference_index();
  std::string fwd;
  for (std::int64_t i = 0; i < 2000000; ++i) fwd += "ACGT"[idx.pac_base(i)];
  std::mt19937_64 rng(5);
  bc::ReadCodes rc;
  for (int i = 0; i < 5000; ++i) {
    std::size_t len = i % 50 == 0 ? 1024 : 1 + rng() % 400;
    std::string s = fwd.substr(rng() % (fwd.size() - len), len);
    if (i % 3 == 0) s[rng() % len] = "ACGTN"[rng() % 5];
    rc.add(s.data(), s.size());
  }
  const auto ref = bc::match_cpu(idx, rc);
  bc::PackedReads p;
  bc::pack_reads(rc, p);
  bc::DeviceBwt bwt(idx);
  for (bool direct : {true, false}) {
    auto cfg = bc::default_kernel_config();
    cfg["direct_sequence"] = direct ? "true" : "false";
    auto lib = bc::load_exact_kernel(cfg, evk::gpu_environment().devices[0].cc());
    EXPECT_EQ(mismatches(ref, run_kernel(lib.kernel(bc::kKernelEntry), cfg, bwt, p)), 0) << cfg_text(cfg);
  }
}

TEST(BarracudaGpu, KernelSpaceProgramsGiveIdenticalKL) {
  EVK_REQUIRE_GPU();
  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const int cc = evk::gpu_environment().devices[0].cc();
  const std::string src(barracuda_exact_kernel().text());
  // 1. the whole space on the CPU (counts derived by hand in space_test.cpp)
  auto t0 = Clock::now();
  const bc::KernelSpace space = bc::enumerate_kernel_space(src);
  const double t_enum = secs(t0);
  ASSERT_EQ(space.combinations, 2121728u);
  ASSERT_EQ(space.legal, 221056u);
  ASSERT_EQ(space.rejected, 2121728u - 221056u);
  ASSERT_EQ(space.legal_with_error, 0u);
  ASSERT_EQ(space.programs.size(), 32u * 4416 + 96 * (5 + 14 + 22 + 30 + 38));  // 151,776
  const bc::CoveragePlan plan = bc::plan_coverage(space, "64");
  ASSERT_EQ(plan.full.size(), 4416u);
  // 2. reads: the GI sample (mixed lengths 36-250, N, substitutions, random no-hits, repeats) and
  // long/short reads up to the 1024-base limit; > 65535 blocks at BLOCK_W = 1
  const bc::BwtIndex& idx = bc::gi_reference_index();
  bc::ReadCodes rc = bc::gi_sample_reads(2, false, 70000);
  {
    std::string fwd;
    for (std::int64_t i = 0; i < 2000000; ++i) fwd += "ACGT"[idx.pac_base(i)];
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
      const std::size_t len = i % 50 == 0 ? 1024 : 1 + rng() % 400;
      std::string r = fwd.substr(rng() % (fwd.size() - len), len);
      if (i % 3 == 0) r[rng() % len] = "ACGTN"[rng() % 5];
      rc.add(r.data(), r.size());
    }
  }
  const auto ref = bc::match_cpu(idx, rc);
  std::size_t hits = 0, reps = 0, ns = 0, misses = 0, one_block = 0;
  for (const auto& kl : ref) {
    hits += kl.hit();
    reps += kl.count() > 1;
    ns += kl.k == 0;
    misses += kl.k > kl.l;
    one_block += kl.hit() && (kl.k - 1) >> 7 == kl.l >> 7;  // the last step reads one cached block twice
  }
  EXPECT_GT(hits, 30000u);
  EXPECT_GT(reps, 100u);
  EXPECT_GT(ns, 1000u);
  EXPECT_GT(misses, 5000u);
  EXPECT_GT(one_block, 10000u);
  bc::PackedReads packed;
  bc::pack_reads(rc, packed);
  bc::DeviceBwt bwt(idx);
  bc::DeviceReads dr;
  dr.upload(packed, nullptr);
  EVK_CUDA(cudaDeviceSynchronize());
  bc::ExactArgs args;
  args.bwt = bwt.data();
  args.consts = bwt.consts();
  dr.fill_args(args);
  std::vector<bc::KL> got(ref.size());
  // 3. compile in processes, then run each program with poisoned outputs and compare every read
  const int procs = std::max(2u, std::thread::hardware_concurrency());
  evk::testing::TempDir dir;
  std::size_t bad_programs = 0;
  std::vector<std::vector<char>> kept;  // cubins of the last set
  // one program: poisoned outputs, launch, every read compared with the CPU
  auto check_program = [&](const evk::gi::Config& cfg, const std::vector<char>& cubin, const std::string& what) {
    if (cubin.empty()) {
      ADD_FAILURE() << what << ": NVRTC failed for " << cfg_text(cfg);
      ++bad_programs;
      return;
    }
    evk::CudaLibrary lib(cubin.data());
    EVK_CUDA(cudaMemset(args.kl, 0xA5, ref.size() * 16));
    bc::launch_exact(lib.kernel(bc::kKernelEntry), cfg, args, nullptr);
    EVK_CUDA(cudaDeviceSynchronize());
    EVK_CUDA(cudaMemcpy(got.data(), args.kl, ref.size() * 16, cudaMemcpyDeviceToHost));
    const int m = mismatches(ref, got);
    if (m != 0 && ++bad_programs <= 20) ADD_FAILURE() << what << ": " << m << " reads differ for " << cfg_text(cfg);
  };
  auto run_set = [&](const std::vector<std::size_t>& set, const char* what, double* compile_s, double* run_s) {
    auto t = Clock::now();
    std::vector<std::vector<std::string>> opts;
    for (std::size_t p : set) opts.push_back(bc::kernel_compile_options(space.programs[p].config));
    auto cubins = compile_in_processes(src, opts, cc, procs, dir.path());
    *compile_s = secs(t);
    t = Clock::now();
    for (std::size_t i = 0; i < set.size(); ++i) check_program(space.programs[set[i]].config, cubins[i], what);
    *run_s = secs(t);
    kept = std::move(cubins);
    std::printf("%s: %zu programs, compile %.1f s (%.1f programs/s, %d processes), run+check %.1f s (%.2f ms each)\n",
                what, set.size(), *compile_s, set.size() / *compile_s, procs, *run_s, 1e3 * *run_s / set.size());
    std::fflush(stdout);
  };
  std::vector<std::size_t> must = plan.full;
  must.insert(must.end(), plan.pairwise.begin(), plan.pairwise.end());
  std::size_t swept = 0;
  // EVK_BC_SWEEP_SHARD=i/n: the whole space in n parts. This process checks every n-th of all
  // 151,776 programs starting at i (no time limit), compiling the next chunk while the GPU checks
  // the current one, so that n GPUs (or n device calls) together check every program; e.g. 0/4 .. 3/4
  // on a 4-GPU host with CUDA_VISIBLE_DEVICES=i. EVK_BC_SWEEP_PROCS sets the compile processes.
  if (const char* sh = std::getenv("EVK_BC_SWEEP_SHARD")) {
    unsigned i = 0, n = 0;
    ASSERT_EQ(std::sscanf(sh, "%u/%u", &i, &n), 2) << "EVK_BC_SWEEP_SHARD wants i/n, got " << sh;
    ASSERT_TRUE(n > 0 && i < n) << sh;
    int nprocs = procs;
    if (const char* p = std::getenv("EVK_BC_SWEEP_PROCS")) nprocs = std::max(1, std::atoi(p));
    std::vector<std::size_t> all = must;
    all.insert(all.end(), plan.rest.begin(), plan.rest.end());
    std::vector<char> seen(space.programs.size(), 0);
    for (std::size_t p : all) seen[p] = 1;
    ASSERT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(space.programs.size()));
    ASSERT_EQ(all.size(), space.programs.size());  // the plan's parts are disjoint
    std::vector<std::size_t> part;
    for (std::size_t k = i; k < all.size(); k += n) part.push_back(all[k]);
    const std::size_t chunk = 1024;
    auto options_of = [&](std::size_t from) {
      std::vector<std::vector<std::string>> opts;
      for (std::size_t k = from; k < std::min(part.size(), from + chunk); ++k)
        opts.push_back(bc::kernel_compile_options(space.programs[part[k]].config));
      return opts;
    };
    const auto t = Clock::now();
    double wait_s = 0, run_s = 0;
    CompileJob job = start_compiles(src, options_of(0), cc, nprocs, dir.path() / "0");
    for (std::size_t from = 0; from < part.size(); from += chunk) {
      auto tw = Clock::now();
      auto cubins = finish_compiles(job);
      wait_s += secs(tw);
      if (from + chunk < part.size())
        job = start_compiles(src, options_of(from + chunk), cc, nprocs, dir.path() / std::to_string(from + chunk));
      tw = Clock::now();
      for (std::size_t k = 0; k < cubins.size(); ++k) check_program(space.programs[part[from + k]].config, cubins[k], sh);
      run_s += secs(tw);
      swept += cubins.size();
      std::printf("sweep shard %s: %zu/%zu checked, %zu differ, %.0f s\n", sh, swept, part.size(), bad_programs, secs(t));
      std::fflush(stdout);
    }
    EXPECT_EQ(swept, part.size());
    EXPECT_EQ(bad_programs, 0u);
    std::printf("sweep shard %s: %zu of all %zu programs checked x %zu reads in %.1f s (%.1f programs/s; waiting for "
                "compiles %.1f s, %d processes; run+check %.1f s, %.2f ms each), %zu differ\n",
                sh, swept, space.programs.size(), ref.size(), secs(t), swept / secs(t), wait_s, nprocs, run_s,
                1e3 * run_s / std::max<std::size_t>(1, swept), bad_programs);
    return;
  }
  double c1 = 0, r1 = 0;
  run_set(must, "BLOCK_W=64 all + pairwise per other BLOCK_W", &c1, &r1);
  // 4. the grouping's claim, checked by the compiler: for every BLOCK_W=64 program with several
  // members, its last member (differing most from the representative) compiles to the same cubin
  {
    std::vector<std::uint64_t> last(space.programs.size(), 0);
    for (std::size_t i = 0; i < space.legal_program.size(); ++i) last[space.legal_program[i]] = space.legal_combination[i];
    std::vector<std::size_t> which;
    std::vector<std::vector<std::string>> opts;
    for (std::size_t j = 0; j < plan.full.size(); ++j)
      if (space.programs[plan.full[j]].members > 1) {
        which.push_back(j);
        opts.push_back(bc::kernel_compile_options(bc::kernel_combination(last[plan.full[j]])));
      }
    const auto t = Clock::now();
    const auto twins = compile_in_processes(src, opts, cc, procs, dir.path());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < which.size(); ++i) differ += twins[i].empty() || twins[i] != kept[which[i]];
    EXPECT_EQ(differ, 0u);
    std::printf("grouping: %zu BLOCK_W=64 programs with several members: last member's cubin identical to the "
                "representative's in %zu (%.1f s)\n", which.size(), which.size() - differ, secs(t));
    ASSERT_GT(which.size(), 1000u);
  }
  // 5. optional sweep of the rest (small block widths first) sized from the measured rates
  double c2 = 0, r2 = 0;
  if (const char* e = std::getenv("EVK_BC_SWEEP_SECONDS")) {
    const double per = (c1 + r1) / static_cast<double>(must.size());
    swept = std::min(plan.rest.size(), static_cast<std::size_t>(std::atof(e) / per));
    if (swept > 0)
      run_set(std::vector<std::size_t>(plan.rest.begin(), plan.rest.begin() + static_cast<std::ptrdiff_t>(swept)),
              "sweep of the rest", &c2, &r2);
  }
  EXPECT_EQ(bad_programs, 0u);
  std::printf("space: %llu combinations, %llu legal, %zu programs (enumerated in %.1f s); checked %zu programs "
              "(%zu BLOCK_W=64, %zu pairwise, %zu of %zu others = first of rest up to BLOCK_W=%s) x %zu reads, "
              "%zu differ\n",
              static_cast<unsigned long long>(space.combinations), static_cast<unsigned long long>(space.legal),
              space.programs.size(), t_enum, must.size() + swept, plan.full.size(), plan.pairwise.size(), swept,
              plan.rest.size(), swept ? space.programs[plan.rest[swept - 1]].config.at("BLOCK_W").c_str() : "-",
              ref.size(), bad_programs);
}

TEST(BarracudaGpu, GiEvaluationPenalisesOnlyWrongKernels) {
  EVK_REQUIRE_GPU();
  auto prob = bc::make_gi_problem();
  const int cc = evk::gpu_environment().devices[0].cc();
  auto compile = [&](const std::string& src) {
    evk::NvrtcRequest req;
    req.source = src;
    req.options = prob->compile_options(prob->default_config());
    req.cc = cc;
    auto r = evk::nvrtc_compile(req);
    EXPECT_TRUE(r.ok) << r.log;
    return evk::CudaLibrary(r.cubin.data());
  };
  auto ev = prob->make_evaluation(3, false);
  auto hold = prob->make_evaluation(3, true);
  EXPECT_NE(ev->describe(), hold->describe());
  EXPECT_EQ(static_cast<int>(ev->work_items()) % evk::gpu_environment().devices[0].sm_count, 0);
  auto good = compile(prob->kernel_source());
  cudaStream_t s = nullptr;
  ev->poison(s);
  ev->launch(good.kernel(prob->kernel_entry().c_str()), prob->default_config(), s);
  auto c = ev->check(s);
  EXPECT_EQ(c.penalty, 0) << c.summary;
  // a mutant that forgets the +1 of k: wrong answers, penalised
  std::string src = prob->kernel_source();
  const std::string line = "k = bc.L2[c] + ok + 1;";
  ASSERT_NE(src.find(line), std::string::npos);
  src.replace(src.find(line), line.size(), "k = bc.L2[c] + ok;");
  auto bad = compile(src);
  ev->poison(s);
  ev->launch(bad.kernel(prob->kernel_entry().c_str()), prob->default_config(), s);
  c = ev->check(s);
  EXPECT_GT(c.penalty, 1000) << c.summary;
  EXPECT_GT(c.bad_fraction, 0.1);
  // a kernel that writes nothing: every read unset (poison), penalised
  ev->poison(s);
  c = ev->check(s);
  EXPECT_GT(c.penalty, 1000) << c.summary;
  EXPECT_GT(c.bad_fraction, 0.99);
}

// The H100 300 x 50 search (bench/gi/runs/h100-2026-11-23f) kept <_K_227>+<_K_225>: a copy of the
// cached block's count into the loop that runs when cache_global_bwt is off, where the cache is never
// loaded. Before the seed value-initialised the cache that read undefined values and passed the check;
// now it counts zeros (16 per word for base A), so the kernel's (k, l) are wrong and it is penalised.
TEST(BarracudaGpu, ReadingTheUnloadedCacheIsPenalised) {
  EVK_REQUIRE_GPU();
  auto prob = bc::make_gi_problem();
  const auto v = evk::gi::apply_genome(*prob, "BLOCK_W=1024 kl_par=true cache_global_bwt=false <_K_227>+<_K_225>");
  ASSERT_NE(v.source.find("cnt += count_base(cache.get(8 + w), c);\n    cnt += count_base(bwt_load1(p + 8 + w), c);"),
            std::string::npos) << "the edit no longer lands in the uncached loop";
  evk::NvrtcRequest req;
  req.source = v.source;
  req.options = prob->compile_options(v.config);
  req.options.insert(req.options.end(), v.options.begin(), v.options.end());
  req.cc = evk::gpu_environment().devices[0].cc();
  const auto r = evk::nvrtc_compile(req);
  ASSERT_TRUE(r.ok) << r.log;
  evk::CudaLibrary lib(r.cubin.data());
  auto ev = prob->make_evaluation(3, false);
  cudaStream_t s = nullptr;
  ev->poison(s);
  ev->launch(lib.kernel(prob->kernel_entry().c_str()), v.config, s);
  const auto c = ev->check(s);
  EXPECT_GT(c.penalty, 1000) << c.summary;
}

TEST(BarracudaGpu, ToolGpuPathEqualsCpuPath) {
  EVK_REQUIRE_GPU();
  const auto tool = evk::testing::bin_dir() / "barracuda_exact";
  const auto g = evk::testing::project_data_dir() / "genomes" / "lambda_virus.fa.gz";
  const auto r = evk::testing::project_data_dir() / "reads" / "lambda_reads_1.fq.gz";
  if (!std::filesystem::exists(tool) || !std::filesystem::exists(g) || !std::filesystem::exists(r))
    GTEST_SKIP() << "tool or lambda data missing";
  evk::testing::TempDir dir;
  const std::string fa = (dir / "lambda.fa.gz").string();
  std::filesystem::copy_file(g, fa);
  auto x = evk::testing::run_tool("barracuda_exact", "index " + fa);
  ASSERT_EQ(x.exit_code, 0) << x.err;
  auto gpu = evk::testing::run_tool("barracuda_exact", "map --exact --backend gpu --kernel original " + fa + " " + r.string() + " -o -");
  auto cpu = evk::testing::run_tool("barracuda_exact", "map --exact --backend cpu " + fa + " " + r.string() + " -o -");
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  auto body = [](const std::string& s) {
    std::string o;
    std::size_t p = 0;
    while (p < s.size()) {
      std::size_t e = s.find('\n', p);
      if (e == std::string::npos) e = s.size();
      if (s[p] != '@') o += s.substr(p, e - p + 1);
      p = e + 1;
    }
    return o;
  };
  EXPECT_GT(body(cpu.out).size(), 100000u);
  EXPECT_TRUE(body(gpu.out) == body(cpu.out));
  auto devs = evk::testing::run_tool("barracuda_exact", "devices");
  EXPECT_NE(devs.out.find("kernel barracuda_exact"), std::string::npos) << devs.out;
}

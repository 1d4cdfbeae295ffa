#include "gi/aln_gi_problem.hpp"

#include <algorithm>
#include <random>
#include <sstream>
#include <stdexcept>

#include "core/aln_kernel.hpp"
#include "evk/parallel.hpp"
#include "gi/adna_gi.hpp"
#include "gi/gi_problem.hpp"
#include "evk/error.hpp"
#include "evk_kernels/barracuda_inexact_kernel.hpp"
#if defined(EVK_HAVE_CUDA)
#include "core/aln_gpu.hpp"
#include "evk/cuda_check.hpp"
#endif

namespace evk::barracuda_exact {

ReadCodes inexact_gi_reads(std::uint64_t seed, bool holdout, std::size_t n) {
  const BwtIndex& idx = gi_reference_index();
  std::mt19937_64 rng(seed * 2 + (holdout ? 1 : 0) + 0x51ED2701A1ull);
  static const char kB[] = "ACGT";
  ReadCodes rc;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t len = 100;
    const unsigned r = static_cast<unsigned>(rng() % 50);
    if (r < 5) len = 36 + rng() % 215;        // 10%: 36..250
    else if (r == 5) len = 251 + rng() % 50;  // 2%: beyond the kernel's MAX_LEN (handed back)
    s.clear();
    if (rng() % 25 == 0) {  // 4% random
      for (std::size_t j = 0; j < len; ++j) s += kB[rng() & 3];
    } else {
      const std::size_t start = rng() % (static_cast<std::size_t>(idx.l_pac) - len - 8);
      for (std::size_t j = 0; j < len + 8; ++j) s += kB[idx.pac_base(static_cast<std::int64_t>(start + j))];
      const unsigned g = static_cast<unsigned>(rng() % 16);
      if (g == 0) {  // insertion of 1-3 bases
        std::string ins;
        for (std::uint64_t j = 0, m = 1 + rng() % 3; j < m; ++j) ins += kB[rng() & 3];
        s.insert(6 + rng() % (len - 12), ins);
      } else if (g == 1) {  // deletion of 1-3 bases
        s.erase(6 + rng() % (len - 12), 1 + rng() % 3);
      }
      s.resize(len);
      static const unsigned kSubs[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 5};
      for (unsigned j = 0, m = kSubs[rng() % 16]; j < m; ++j) s[rng() % len] = kB[rng() & 3];
      if (rng() % 33 == 0) s[rng() % len] = 'N';
      if (rng() & 1) {
        std::reverse(s.begin(), s.end());
        for (auto& c : s) c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
      }
    }
    rc.add(s.data(), s.size());
  }
  return rc;
}

double hits_penalty(const Aln* ref, std::uint32_t n_ref, const Aln* got, std::uint32_t n_got) {
  double p = 0;
  for (std::uint32_t j = 0; j < std::max(n_ref, n_got); ++j) {
    if (j >= n_ref || j >= n_got) {
      p += 100;  // a missing or an extra interval
      continue;
    }
    const Aln &r = ref[j], &g = got[j];
    p += kl_penalty(KL{r.k, r.l}, KL{g.k, g.l});
    if (r.n_mm != g.n_mm || r.n_gapo != g.n_gapo || r.n_gape != g.n_gape || r.n_ins != g.n_ins || r.n_del != g.n_del ||
        r.score != g.score)
      p += 100;
  }
  return p;
}

namespace {

constexpr int kMaxStackCap = 4095;

std::vector<gi::ConfigParam> inexact_params() {
  std::vector<std::string> block_w, tps;
  for (int b = 32; b <= 1024; b += 32) block_w.push_back(std::to_string(b));
  for (int t = 128; t <= 2048; t += 128) tps.push_back(std::to_string(t));
  return {
      gi::ConfigParam{"BLOCK_W", gi::ConfigParam::Kind::number, block_w, std::to_string(kAlnKernelBlockW),
                      "threads per block (a multiple of 32 up to 1024)"},
      gi::ConfigParam{"STACK_CAP", gi::ConfigParam::Kind::number, {"1023", "2047", "4095"}, std::to_string(kMaxStackCap),
                      "stored stack entries per thread (fewer: more reads handed back to the CPU)"},
      gi::ConfigParam{"THREADS_PER_SM", gi::ConfigParam::Kind::number, tps, "512",
                      "persistent threads per SM (launch shape; the stacks take 16 B x STACK_CAP each)"},
  };
}

int int_of(const gi::Config& c, const char* name) { return std::stoi(c.at(name)); }

}  // namespace

gi::Config validate_inexact_config(const gi::Config& in) {
  gi::Config c;
  const auto params = inexact_params();
  for (const auto& p : params) c[p.name] = p.default_value;
  for (const auto& [k, v] : in) {
    auto it = std::find_if(params.begin(), params.end(), [&](const gi::ConfigParam& p) { return p.name == k; });
    if (it == params.end()) throw InputError("inexact kernel config: unknown parameter " + k);
    if (std::find(it->values.begin(), it->values.end(), v) == it->values.end())
      throw InputError("inexact kernel config: " + k + "=" + v + " is not a legal value");
    c[k] = v;
  }
  return c;
}

namespace {
gi::Config validated(const gi::Config& in) { return validate_inexact_config(in); }

#if defined(EVK_HAVE_CUDA)
// One class's cases: the index, the reads and the search options (the original's answers and which
// reads it must answer, from the CPU search).
struct Workload {
  const BwtIndex* idx = nullptr;
  ReadCodes reads;
  AlnOptions opt;
  std::string what;  // "generated reference 4641652 bp, N reads with errors (inexact search)"
};

class Evaluation final : public gi::Evaluation {
 public:
  Evaluation(Workload w, std::uint64_t seed, bool holdout)
      : seed_(seed), holdout_(holdout), w_(std::move(w)),
        dev_(*w_.idx, w_.opt, current_device(), kMaxStackCap, kAlnKernelMaxLen, 2048) {
    const BwtIndex& idx = *w_.idx;
    const ReadCodes& reads = w_.reads;
    ref_ = aln_search_batch(idx, reads, w_.opt, 0);
    // which reads the original kernel answers (the CPU mirrors its bookkeeping), on every core
    std::uint32_t max_len = 0;
    for (auto l : reads.len) max_len = std::max(max_len, l);
    const int gapo = std::min(w_.opt.max_gapo, aln_max_diff(w_.opt, static_cast<int>(max_len)));
    std::vector<char> must(reads.size(), 0);
    parallel_for(reads.size(), [&](std::size_t i0, std::size_t i1) {
      AlnSearcher s(idx, w_.opt);
      s.set_batch_max_gapo(gapo);
      std::vector<Aln> tmp;
      for (std::size_t i = i0; i < i1; ++i) {
        AlnSearchStats st;
        tmp.clear();
        s.search(reads.codes.data() + reads.offset[i], reads.len[i], tmp, &st);
        must[i] = kernel_answers(st, reads.len[i], kAlnKernelMaxLen, kMaxStackCap, kAlnKernelAlnCap);
      }
    });
    must_.assign(must.begin(), must.end());
    dev_.upload(reads, kAlnKernelAlnCap, nullptr);
    EVK_CUDA(cudaDeviceSynchronize());
  }
  std::string describe() const override {
    std::ostringstream o;
    o << w_.what << ", seed " << seed_ << (holdout_ ? " (hold-out)" : " (training)");
    return o.str();
  }
  double work_items() const override { return static_cast<double>(w_.reads.size()); }
  void poison(cudaStream_t s) override { dev_.poison(s); }
  void launch(cudaKernel_t k, const gi::Config& cfg, cudaStream_t s) override {
    const gi::Config c = validated(cfg);
    const int cap = int_of(c, "STACK_CAP");
    dev_.launch(k, int_of(c, "BLOCK_W"), cap, dev_.threads_for(cap, int_of(c, "THREADS_PER_SM")), s);
  }
  gi::Check check(cudaStream_t s) override {
    dev_.download(n_out_, aln_out_, s);
    gi::Check c;
    std::size_t wrong = 0, back = 0;
    std::vector<Aln> got;
    for (std::size_t i = 0; i < w_.reads.size(); ++i) {
      const std::uint32_t n = n_out_[i];
      double p = 0;
      if (n == kHandedBack) {
        ++back;
        if (must_[i]) p = 100;  // the original answers this read
      } else if (n > static_cast<std::uint32_t>(kAlnKernelAlnCap)) {
        p = 200;  // not answered at all (poison) or garbage
      } else {
        got.clear();
        for (std::uint32_t a = 0; a < n; ++a)
          got.push_back(decode_kernel_aln(aln_out_.data() + (i * static_cast<std::size_t>(kAlnKernelAlnCap) + a) * 3));
        p = hits_penalty(ref_.begin(i), ref_.count(i), got.data(), n);
      }
      if (p > 0) ++wrong;
      c.penalty += p;
    }
    c.max_error = static_cast<double>(wrong);
    c.bad_fraction = w_.reads.size() ? static_cast<double>(wrong) / static_cast<double>(w_.reads.size()) : 0;
    c.summary = std::to_string(wrong) + " of " + std::to_string(w_.reads.size()) + " hit lists wrong, " + std::to_string(back) +
                " handed back, penalty " + std::to_string(c.penalty);
    return c;
  }

 private:
  static int current_device() {
    int d = 0;
    EVK_CUDA(cudaGetDevice(&d));
    return d;
  }
  std::uint64_t seed_;
  bool holdout_;
  Workload w_;
  InexactDevice dev_;
  AlnBatch ref_;
  std::vector<bool> must_;
  std::vector<std::uint32_t> n_out_;
  std::vector<std::uint64_t> aln_out_;
};
#endif

class Problem final : public gi::Problem {
 public:
  std::string name() const override { return "barracuda_inexact"; }
  std::string kernel_source() const override { return std::string(barracuda_inexact_kernel().text()); }
  std::string kernel_entry() const override { return kAlnKernelEntry; }
  std::vector<gi::ConfigParam> config_params() const override { return inexact_params(); }
  std::vector<std::string> compile_options(const gi::Config& cfg) const override {
    const gi::Config c = validated(cfg);
    return {"-DBLOCK_W=" + c.at("BLOCK_W"), "-DSTACK_CAP=" + c.at("STACK_CAP")};
  }
  std::vector<gi::SizeClass> size_classes() const override {
    return {{"ecoli", "an E. coli-sized generated reference (4.6 Mbp), reads with mismatches and gaps"},
            {"adna", "ancient-DNA reads (median 45 bp, deaminated, 10% contaminants) against a 100 Mbp human-like "
                     "generated genome at -l 1024 -n 0.01 -o 2 (gi/adna_gi.hpp)"}};
  }
  std::unique_ptr<gi::Evaluation> make_evaluation(std::uint64_t seed, bool holdout,
                                                  const std::string& size_class) const override {
    check_class(size_class);
#if defined(EVK_HAVE_CUDA)
    int dev = 0, sms = 0;
    EVK_CUDA(cudaGetDevice(&dev));
    EVK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // the inexact search is ~1,000x the exact one's work per read: SMs x 256 reads (33,792 on an H100)
    const std::size_t n = static_cast<std::size_t>(sms) * 256;
    Workload w;
    if (size_class == "adna") {
      const AdnaGiMaterial& m = adna_gi_material();
      w.idx = &m.idx;
      w.reads = adna_gi_reads(m.ref, seed, holdout, n);
      w.opt = adna_gi_options();
      w.what = "human-like generated genome " + std::to_string(m.idx.l_pac) + " bp, " + std::to_string(n) +
               " aDNA reads at -l 1024 -n 0.01 -o 2";
    } else {
      w.idx = &gi_reference_index();
      w.reads = inexact_gi_reads(seed, holdout, n);
      w.what = "generated reference " + std::to_string(w.idx->l_pac) + " bp, " + std::to_string(n) +
               " reads with errors (inexact search)";
    }
    return std::make_unique<Evaluation>(std::move(w), seed, holdout);
#else
    (void)seed;
    (void)holdout;
    throw std::runtime_error("barracuda_inexact: built without CUDA; no GPU evaluation");
#endif
  }
  std::string class_of(const gi::Properties& request) const override {
    const auto it = request.find("seed_len");
    return it == request.end() ? "ecoli" : inexact_size_class(static_cast<int>(it->second));
  }
  int default_population() const override { return 100; }
  int default_generations() const override { return 20; }
  std::string launch_bounds_threads() const override { return "BLOCK_W"; }
  // the search loop pops up to the queue limit (2,000,000) entries; the read loop runs once per read
  int loop_limit() const override { return 1 << 22; }
};

}  // namespace

std::unique_ptr<evk::gi::Problem> make_inexact_gi_problem() { return std::make_unique<Problem>(); }

std::string inexact_size_class(int seed_len) { return seed_len > kAlnKernelMaxLen ? "adna" : "ecoli"; }

}  // namespace evk::barracuda_exact

// A bwa 0.7 FM-index held in memory, in bwa's own layout, so that the files can be read and written
// without conversion and the GPU can use the occurrence array as it is:
//   text   = forward reference + its reverse complement (2 bits per base, non-ACGT replaced),
//            seq_len = 2 * l_pac bases; the BWT is of text + '$' with the '$' removed at row `primary`;
//   occ    = per 128 BWT positions: four uint64 counts (A, C, G, T before the block, '$' excluded)
//            then eight uint32 words of 16 bases (first base in the top bits); a final four counts;
//   sa     = SA[32 * j] for j = 1 .. seq_len / 32 (the rows' text positions);
//   pac    = the forward reference, 4 bases per byte, first base in the top bits.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace evk::barracuda_exact {

constexpr std::uint64_t kOccInterval = 128;  // BWT positions per occurrence block
constexpr std::uint64_t kBlockWords = 16;    // uint32 words per full block (8 for counts, 8 for bases)
constexpr std::uint64_t kSaInterval = 32;    // bwa index's -sa interval

struct Contig {
  std::string name, anno;  // anno: the FASTA comment, "(null)" when there is none (as bwa writes it)
  std::int64_t offset = 0;  // in the forward text
  std::int32_t len = 0;
  std::int32_t n_ambs = 0;  // number of ambiguous runs (holes) in this contig
  std::uint32_t gi = 0;
};

struct Hole {  // a run of one ambiguous character in the reference (bwa's .amb entry)
  std::int64_t offset = 0;
  std::int32_t len = 0;
  char amb = 'N';
};

// std::allocator whose resize() leaves new elements unwritten (values given explicitly, as in
// assign(n, 0), are written): the index files are read straight into fresh pages by several threads,
// so the first touch of gigabytes is not a serial zero fill (io/index_files.cpp).
template <class T>
struct NoFillAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoFillAllocator<U>;
  };
  NoFillAllocator() = default;
  template <class U>
  NoFillAllocator(const NoFillAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using IndexArray = std::vector<T, NoFillAllocator<T>>;

struct BwtIndex {
  // .bwt / .sa
  std::uint64_t primary = 0;
  std::uint64_t L2[5] = {0, 0, 0, 0, 0};  // L2[c] = number of bases < c; L2[4] = seq_len
  std::uint64_t seq_len = 0;
  IndexArray<std::uint32_t> occ;  // the .bwt body (bwt_size words)
  std::uint64_t sa_intv = kSaInterval;
  IndexArray<std::uint64_t> sa;  // sa[j] = SA[j * sa_intv]; sa[0] = (uint64)-1 like bwa (not stored)
  // .pac / .ann / .amb
  std::int64_t l_pac = 0;
  IndexArray<std::uint8_t> pac;  // forward strand only, (l_pac + 3) / 4 bytes
  std::uint32_t seed = 11;
  std::vector<Contig> contigs;
  std::vector<Hole> holes;

  // bwa's bwt_occ: occurrences of c in BWT rows [0, k] ('$' excluded); k == -1 gives 0.
  std::uint64_t occ_at(std::uint64_t k, int c) const;
  // The text position of SA row k (bwa's bwt_sa: LF-walk to a sampled row).
  std::uint64_t sa_at(std::uint64_t k) const;
  // Base at forward-text position i of the pac.
  int pac_base(std::int64_t i) const { return (pac[static_cast<std::size_t>(i >> 2)] >> ((~i & 3) << 1)) & 3; }
};

// Words of .bwt for a BWT of seq_len bases: base words + 8 per occurrence record.
std::uint64_t occ_words(std::uint64_t seq_len);

// Builds the index of a reference in memory (what `bwa index` computes, same bytes).
struct RefSeq {
  std::string name, comment;
  std::string seq;  // as read: IUPAC letters, any case
};
BwtIndex build_index(const std::vector<RefSeq>& ref);

// bwa's limit on a reference: a contig's length is a 32-bit int in its .ann. build_index throws
// InputError naming the first contig over max_bases (the parameter lets tests use a small limit).
constexpr std::uint64_t kMaxContigBases = 2147483647;
void check_bwa_limits(const std::vector<RefSeq>& ref, std::uint64_t max_bases = kMaxContigBases);

// How `index` builds: the suffix sort on the listed GPUs (core/sa_gpu.hpp), or with libdivsufsort
// on the CPU when the list is empty, when the build has no CUDA, or when a GPU has no room (then
// IndexReport::fallback says why). Everything else (packing, BWT, occurrences) runs on `threads`.
struct IndexOptions {
  std::vector<int> devices;       // GPUs sharing the suffix sort; empty: the CPU
  std::uint64_t gpu_memory = 0;   // device bytes the sort may use per GPU; 0: all that is free
  int threads = 0;                // host threads; 0: every core
  bool check_order = false;       // GPU sort: verify every adjacent pair of rows (core/sa_gpu.hpp)
  // stage name and fraction done; called from the building thread or serially from GPU workers
  std::function<void(const std::string& stage, double fraction)> progress;
};

struct IndexReport {
  bool gpu = false;           // the suffix sort ran on GPUs
  std::string fallback;       // why the CPU sorted although GPUs were given
  double pack_s = 0, sort_s = 0, bwt_s = 0;
  std::uint64_t batches = 0, max_rounds = 0, resorted = 0;  // GPU sort: see SaGpuReport
  std::uint64_t doubled = 0, doubling_steps = 0;
  bool checked = false;       // check_order ran on the GPU sort
  std::uint64_t disorders = 0;  // adjacent rows found out of order (0 unless the sort is wrong)
  struct Gpu {
    int device = 0;
    std::string name;
    std::uint64_t peak_bytes = 0, batches = 0, suffixes = 0;
    double seconds = 0;
  };
  std::vector<Gpu> gpus;
};
BwtIndex build_index(const std::vector<RefSeq>& ref, const IndexOptions& opt, IndexReport* report = nullptr);

// One base code per character: A/a 0, C/c 1, G/g 2, T/t 3, anything else 4 (bwa's nst_nt4_table).
int base_code(char c);
// True for the characters a reference may hold: IUPAC nucleotide letters (either case) and '-'.
bool is_iupac(char c);

}  // namespace evk::barracuda_exact

// The suffix sort of `index` on GPUs: bucket the suffixes by their first 12 bases, sort a batch of
// buckets on one GPU by their first 29 bases (CUB radix sort), then re-sort each run of equal
// prefixes by the next 29 bases (CUB segmented sort), for up to 12 rounds. Every suffix then has
// a rank: its row, or the first row of its group. Suffixes still in groups (long exact repeats:
// bwa's N replacement repeats every 512 kb, duplications) are finished on the first GPU by prefix
// doubling (Manber-Myers): each step sorts a group by the ranks h bases on, then h doubles. The
// text (2 bits per base) and the ranks (5 bytes per base) are held on every GPU; batches are sized
// to the free memory left and dealt to the GPUs in turn.
//
// Output is what bwa's index keeps of the suffix array, written straight into the caller's arrays:
// for SA row r = 1..n (row 0 is the suffix '$'): bwt[r] = text[SA[r] - 1], or 4 where SA[r] = 0,
// and samples[r / 32] = SA[r] where r % 32 == 0. Suffix order is that of text + '$' ('$' smallest).
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace evk::barracuda_exact {

struct SaGpuOptions {
  std::vector<int> devices{0};
  std::uint64_t memory_cap = 0;  // device bytes the builder may use per GPU; 0: all that is free less a reserve
  std::function<void(std::uint64_t placed, std::uint64_t total)> progress;  // suffixes placed (called serially)
  // verify the result on the final ranks (Burkhardt and Kaerkkaeinen's suffix array checker): every
  // row held by one suffix, and each adjacent pair in order by its first base and the rank of the
  // suffix after it (SaGpuReport::disorders)
  bool check_order = false;
};

struct SaGpuDevice {
  int device = 0;
  std::string name;
  std::uint64_t peak_bytes = 0;  // device memory the builder held at most
  std::uint64_t batches = 0, suffixes = 0;
  double seconds = 0;
};

struct SaGpuReport {
  std::vector<SaGpuDevice> devices;
  std::uint64_t batches = 0;        // batches sorted (after any split)
  std::uint64_t batch_capacity = 0;  // suffixes one batch may hold on the first GPU
  std::uint64_t max_rounds = 0;      // the deepest re-sort: 29 bases per round
  std::uint64_t resorted = 0;        // suffixes whose first 29 bases were not enough
  std::uint64_t doubled = 0;         // suffixes left to prefix doubling (long exact repeats)
  std::uint64_t doubling_steps = 0;  // its steps (the bases compared double each step)
  bool checked = false;              // check_order ran
  std::uint64_t disorders = 0;       // adjacent rows out of order, rows held twice or by none
};

// A GPU without room for the text and one batch: the caller takes the CPU path.
struct SaGpuNoRoom : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Sorts the n suffixes of `text` (codes 0..3) and fills bwt[1..n] and the samples of rows 1..n as
// above. Throws SaGpuNoRoom when a GPU cannot hold the text and a batch, evk::CudaError on CUDA
// failures.
SaGpuReport sort_suffixes_gpu(const std::uint8_t* text, std::uint64_t n, std::uint8_t* bwt, std::uint64_t* samples,
                              const SaGpuOptions& opt);

// The order check that check_order runs, on a suffix array given by the caller (sa[i]: the text
// position of row i + 1, rows 1..n as above): the number of faults (adjacent rows out of order, rows
// held twice or by none); 0 for the true order. How the tests show that `index --check` can fail.
std::uint64_t check_suffix_order_gpu(const std::uint8_t* text, std::uint64_t n, const std::uint64_t* sa, int device = 0);

}  // namespace evk::barracuda_exact

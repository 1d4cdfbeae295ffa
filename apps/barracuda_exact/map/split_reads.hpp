// `barracuda_exact split`: one reads file (and its mates) into shards for the many-machine workflow
// (workflows/map): blocks of `block` records dealt round-robin to the shards, read with map's
// streaming reader (so every damaged or truncated input is refused the same way) and written as
// BGZF FASTQ (FASTA records as FASTA; names whole, comments dropped), each shard through
// AtomicOutput. Mates: both files are split in lockstep and must hold the same number of records.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace evk::barracuda_exact {

struct SplitOptions {
  std::string reads, reads2;        // reads2: optional mates
  std::vector<std::string> out, out2;  // one path per shard (out2 with mates)
  std::size_t block = 4096;         // records per block
  int threads = 0;                  // compression and worker threads (0 = all cores)
  int level = 1;                    // BGZF level of the shards (intermediate files: fast)
};

// Records written to each shard. Throws InputError for bad inputs, unequal mate files or outputs.
std::vector<std::uint64_t> split_reads(const SplitOptions& opt);

}  // namespace evk::barracuda_exact

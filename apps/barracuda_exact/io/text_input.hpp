// The first stage of `map`: a reads file (or stdin) as an ordered stream of decompressed text
// chunks, produced ahead by its own thread so the rest of the pipeline never waits on I/O.
//   plain text  read in chunks;
//   gzip        inflated by isa-l's igzip on the input thread (one stream cannot be split), every
//               member in turn (multi-member files), CRC-32 and length of each member checked;
//   BGZF        blocks split by their BSIZE and inflated in parallel on the task pool by libdeflate
//               (CRC-32 and ISIZE checked), reassembled in order; the end-of-file block must be
//               there (a file cut at a block boundary is truncated). A member that is not BGZF
//               continues the file through the gzip path.
// Truncation or damage at any level: InputError naming the file and the compressed byte offset,
// handed out in order (after the chunks before it).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "evk/task_pool.hpp"

namespace evk::barracuda_exact {

struct TextChunk {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;
};

struct TextInputStats {
  std::atomic<std::uint64_t> compressed_bytes{0}, text_bytes{0};
  std::atomic<std::uint64_t> inflate_ns{0};  // thread-time spent inflating (all threads)
  std::atomic<std::uint64_t> read_ns{0};     // thread-time spent in read(2)
};

enum class TextFormat { plain, gzip, bgzf };

class TextInput {
 public:
  // Opens the file ("-" = stdin; InputError when it cannot be opened) and starts the input thread.
  // chunk_bytes: size of the text chunks (plain, gzip) and about the text per BGZF task; at most
  // pool.workers() + 4 chunks are read ahead, or for a gzip stream (inflated on one thread)
  // ahead_bytes of text until end_read_ahead() (`map`: while the index loads).
  TextInput(const std::string& path, TaskPool& pool, std::size_t chunk_bytes = std::size_t(1) << 20,
            std::size_t ahead_bytes = 0);
  ~TextInput();  // stops the input thread (outstanding BGZF tasks finish on their own)
  TextInput(const TextInput&) = delete;
  TextInput& operator=(const TextInput&) = delete;

  // The next chunk in file order; nullptr after the last one. Throws the input's InputError.
  std::shared_ptr<const TextChunk> next();
  const std::string& path() const;
  TextFormat format() const;  // known once the first chunk was handed out
  const TextInputStats& stats() const;
  void end_read_ahead();  // back to pool.workers() + 4 chunks (what is read stays until taken)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evk::barracuda_exact

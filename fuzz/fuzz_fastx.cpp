// FASTA/FASTQ (plain, gzip or BGZF) through both readers of `barracuda_exact map`: the serial one
// (htslib's BGZF and kseq with our checks) and the streaming one (text_input, record_scan,
// read_batch), and the reference reader of `index`. Bad input must end in InputError, nothing else
// (no crash, no other exception); what is accepted must be well-formed; on uncompressed input both
// readers must agree exactly: the same reads, or the same message (io/read_rules.hpp).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/index.hpp"
#include "evk/error.hpp"
#include "fuzz_util.hpp"
#include "io/read_batch.hpp"
#include "io/record_scan.hpp"
#include "io/sequences.hpp"
#include "evk/task_pool.hpp"
#include "io/text_input.hpp"

namespace bc = evk::barracuda_exact;

namespace {
struct Outcome {
  std::vector<std::string> reads;  // name, seq, qual per read
  std::string error;
};
void take(Outcome& o, const bc::ReadBatch& b) {
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b.name(i).empty() || b.name(i).size() > 254) __builtin_trap();
    if (b.has_qual[i] && b.qual(i).size() != b.seq(i).size()) __builtin_trap();
    for (char c : b.seq(i))
      if (!bc::is_iupac(c) && c != '.') __builtin_trap();
    o.reads.emplace_back(b.name(i));
    o.reads.emplace_back(b.seq(i));
    o.reads.emplace_back(b.has_qual[i] ? std::string(b.qual(i)) : std::string("*"));
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = evk::fuzz::put("in.fq", evk::fuzz::view(data, size)).string();
  Outcome serial, stream;
  try {
    bc::ReadSource src(path);
    bc::ReadBatch b;
    while (src.next(b, 7, 1000, 1024)) take(serial, b);
  } catch (const evk::InputError& e) {
    serial.error = e.what();
  }
  try {
    static evk::TaskPool pool(1);  // one worker for the whole run (no thread churn per input)
    bc::TextInput in(path, pool, 1 + size % 61);  // small chunks: records cross them
    bc::RecordScanner scan(in);
    bc::ScanBatch sb;
    bc::ReadBatch b;
    while (scan.next(sb, 7, 1000, 1024)) {
      bc::parse_batch(path, sb, b, pool);
      take(stream, b);
    }
  } catch (const evk::InputError& e) {
    stream.error = e.what();
  }
  const bool compressed = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!compressed && (serial.error != stream.error || serial.reads != stream.reads)) __builtin_trap();
  try {
    const auto ref = bc::read_reference(path);  // contigs without bases are bwa's, but never the last
    if (ref.empty() || ref.back().seq.empty()) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  return 0;
}

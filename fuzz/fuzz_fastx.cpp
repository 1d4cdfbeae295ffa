// FASTA/FASTQ (plain or gzip) through htslib's BGZF and kseq with our checks: the reads reader of
// `barracuda_exact map` and the reference reader of `index`. Bad input must end in InputError,
// nothing else (no crash, no other exception); what is accepted must be well-formed.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "core/index.hpp"
#include "evk/error.hpp"
#include "fuzz_util.hpp"
#include "io/sequences.hpp"

namespace bc = evk::barracuda_exact;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = evk::fuzz::put("in.fq", evk::fuzz::view(data, size)).string();
  try {
    bc::ReadSource src(path);
    bc::ReadBatch b;
    while (src.next(b, 7, 1000, 1024)) {
      for (std::size_t i = 0; i < b.size(); ++i) {
        if (b.name[i].empty() || b.name[i].size() > 254) __builtin_trap();
        if (!b.qual[i].empty() && b.qual[i].size() != b.seq[i].size()) __builtin_trap();
        for (char c : b.seq[i])
          if (!bc::is_iupac(c) && c != '.') __builtin_trap();
      }
    }
  } catch (const evk::InputError&) {
  }
  try {
    const auto ref = bc::read_reference(path);
    for (const auto& r : ref)
      if (r.seq.empty()) __builtin_trap();
  } catch (const evk::InputError&) {
  }
  return 0;
}

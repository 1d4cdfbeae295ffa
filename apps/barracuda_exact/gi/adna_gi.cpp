#include "gi/adna_gi.hpp"

#include <mutex>
#include <string>

#include "adna.hpp"
#include "evk/parallel.hpp"
#include "genome_model.hpp"
#if defined(EVK_HAVE_CUDA)
#include <cuda_runtime.h>
#endif

namespace evk::barracuda_exact {

std::vector<RefSeq> adna_gi_genome(std::uint64_t bases, std::uint64_t seed) {
  sim::GenomeOptions go;
  go.seed = seed;
  go.size = bases;
  const sim::GenomeModel m = sim::genome_model_make(go);
  std::vector<RefSeq> ref(sim::kContigs);
  parallel_for(ref.size(), [&](std::size_t i0, std::size_t i1) {
    for (std::size_t i = i0; i < i1; ++i) {
      sim::ContigStats st;
      ref[i].name = sim::genome_contig_name(static_cast<int>(i));
      sim::genome_contig_build(m, static_cast<int>(i), ref[i].seq, st);
    }
  });
  return ref;
}

ReadCodes adna_gi_reads(const std::vector<RefSeq>& ref, std::uint64_t seed, bool holdout, std::size_t n) {
  sim::AdnaOptions o;  // the model's defaults: median 45 bp (25..120), deamination 0.3 decaying, 10% contaminants
  o.seed = seed * 2 + (holdout ? 1 : 0) + 0xAD7A0000ull;
  const sim::AdnaPlan plan = sim::adna_plan(o);
  sim::AdnaRef r;
  for (const auto& c : ref) {
    r.names.push_back(c.name);
    r.seqs.push_back(c.seq);
  }
  sim::adna_ref_index(r, o.min_len, "the aDNA class's genome");
  ReadCodes rc;
  std::string fq;
  for (std::uint64_t first = 0; first < n; first += sim::kAdnaChunk) {
    sim::adna_chunk(r, plan, first, static_cast<std::size_t>(std::min<std::uint64_t>(sim::kAdnaChunk, n - first)), fq);
    std::size_t pos = 0;
    for (int line = 0; pos < fq.size(); ++line) {  // FASTQ: the sequence is line 1 of each 4
      const std::size_t end = fq.find('\n', pos);
      if (line % 4 == 1) rc.add(fq.data() + pos, end - pos);
      pos = end + 1;
    }
  }
  return rc;
}

AlnOptions adna_gi_options() {
  AlnOptions o;
  o.seed_len = 1024;
  o.fnr = 0.01f;
  o.max_diff = -1;
  o.max_gapo = 2;
  return o;
}

const AdnaGiMaterial& adna_gi_material() {
  static AdnaGiMaterial m;
  static std::once_flag once;
  std::call_once(once, [] {
    m.ref = adna_gi_genome(kAdnaGiBases, kAdnaGiGenomeSeed);
    IndexOptions io;
#if defined(EVK_HAVE_CUDA)
    int dev = 0, count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0 && cudaGetDevice(&dev) == cudaSuccess) io.devices = {dev};
    else cudaGetLastError();
#endif
    m.idx = build_index(m.ref, io);
  });
  return m;
}

}  // namespace evk::barracuda_exact

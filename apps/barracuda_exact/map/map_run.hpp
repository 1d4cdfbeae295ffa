// `barracuda_exact map`: the one driver of every mode (exact, or inexact: bwa aln + samse for single
// ends, bwa aln + sampe for pairs; CPU or GPU). Reads -> mapper -> SAM/BAM as a streaming pipeline
// of named stages, each on its own thread with bounded queues between them (memory stays bounded
// whatever the file size):
//   input   decompress (io/text_input: plain, gzip on its own thread, BGZF blocks on the task pool)
//   scan    record boundaries, serially, with kseq's semantics (io/record_scan)
//   parse   records -> reads, in parallel chunks (io/read_batch)
//   map     `lanes` batches at once (mapper.hpp; a GPU lane drives one CUDA stream), out of order
//   format  batches back in input order: the mapper's finish() (the inexact mode's samse), then
//           records in parallel parts (io/sam_writer)
//   write   BGZF blocks compressed by htslib's thread pool
// The parallel stages share one task pool of `threads` workers.
// Pairs (reads2 given; the inexact mode only): the two files decompressed and scanned in lockstep, a
// batch holding the same number of reads of each (bwa sampe's batch: the insert size is estimated
// per batch), checked to pair up when parsed (io/read_batch's check_pairs); a lane searches both
// ends; the format stage makes sampe's records in input order (AlnMapper::finish_pairs), then formats
// them interleaved (read 1, read 2 of each pair). A batch boundary in one file is one in the other,
// so a file that ends first, a truncation or a name that differs is reported for the same pair, with
// the same message, whatever the batch size, and the insert size is estimated over the same batches.
// The tests hold a serial oracle of this driver (tests/barracuda_exact/serial_map.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "core/index.hpp"
#include "map/map_options.hpp"
#include "map/mapper.hpp"

namespace evk::barracuda_exact {

// Throws InputError for bad inputs/outputs (including paired files that do not pair up); outputs
// only appear when everything succeeded. progress: reads written so far. on_mapper: called with the
// mapper before the first batch (tests: to poison its GPU outputs).
MapStats run_map(const MapOptions& opt, const std::function<void(std::uint64_t)>& progress = {},
                 const std::function<void(Mapper&)>& on_mapper = {});

// The mapper of opt's mode and backend (an AlnMapper when opt.inexact) with `lanes` lanes (batches
// at once: CPU lanes or streams per GPU; 0: opt.cpu_lanes or opt.streams), records with opt's read
// group and bwa aln's -R.
std::unique_ptr<Mapper> make_mapper(const MapOptions& opt, const BwtIndex& idx, int lanes = 0);

}  // namespace evk::barracuda_exact

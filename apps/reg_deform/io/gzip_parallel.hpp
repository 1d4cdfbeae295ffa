// A gzip file written on every core: the bytes cut into 256 KiB pieces, each compressed by libdeflate
// (level 6, zlib's default) into a gzip member of its own, the members written in order. A gzip file
// of several members is one file to every reader that follows RFC 1952 (zlib's gzread, so nifticlib
// and NiftyReg; Python's gzip, so nibabel; gzip -d). Without libdeflate: one member through zlib.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace evk::reg_deform {

struct GzipPiece {
  const void* data;
  std::size_t size;
};

// Writes the pieces, in order, as one gzip file at path (created or truncated). False on a write
// error (the caller names the file); threads 0: all cores.
bool write_gzip_parallel(const std::string& path, const std::vector<GzipPiece>& pieces, int threads = 0);

}  // namespace evk::reg_deform

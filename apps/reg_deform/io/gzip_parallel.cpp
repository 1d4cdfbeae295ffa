#include "io/gzip_parallel.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "evk/parallel.hpp"

#ifdef EVK_HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

namespace evk::reg_deform {
namespace {
constexpr std::size_t kMember = 1 << 18;  // uncompressed bytes per gzip member (256 KiB: a 1 mm byte volume spreads over ~34 cores)
constexpr int kLevel = 6;
}  // namespace

bool write_gzip_parallel(const std::string& path, const std::vector<GzipPiece>& pieces, int threads) {
  std::size_t total = 0;
  for (const GzipPiece& p : pieces) total += p.size;
  std::vector<unsigned char> bytes(total);  // the pieces as one run, cut below at member bounds
  std::size_t at = 0;
  for (const GzipPiece& p : pieces) {
    if (p.size) std::memcpy(bytes.data() + at, p.data, p.size);
    at += p.size;
  }
#ifdef EVK_HAVE_LIBDEFLATE
  const std::size_t members = std::max<std::size_t>(1, (total + kMember - 1) / kMember);
  std::vector<std::vector<unsigned char>> out(members);
  parallel_for(members, [&](std::size_t m0, std::size_t m1) {
    std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(libdeflate_alloc_compressor(kLevel),
                                                                                libdeflate_free_compressor);
    for (std::size_t m = m0; m < m1; ++m) {
      const std::size_t off = m * kMember, len = std::min(kMember, total - off);
      out[m].resize(libdeflate_gzip_compress_bound(c.get(), len));
      out[m].resize(libdeflate_gzip_compress(c.get(), bytes.data() + off, len, out[m].data(), out[m].size()));
    }
  }, threads);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f) return false;
  for (const auto& o : out)
    if (o.empty() || std::fwrite(o.data(), 1, o.size(), f.get()) != o.size()) return false;
  return std::fclose(f.release()) == 0;
#else
  (void)threads;
  gzFile g = gzopen(path.c_str(), "wb6");
  if (!g) return false;
  bool ok = true;
  for (std::size_t off = 0; off < total && ok; off += 1u << 30) {
    const unsigned len = static_cast<unsigned>(std::min<std::size_t>(1u << 30, total - off));
    ok = gzwrite(g, bytes.data() + off, len) == static_cast<int>(len);
  }
  return gzclose(g) == Z_OK && ok;
#endif
}

}  // namespace evk::reg_deform

#include "evk/fatbin.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace evk {
namespace {

constexpr std::uint32_t kMagic = 0xBA55ED50u;  // an executable fatbin container
constexpr int kPtx = 1, kElf = 2;              // entry kinds

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

// A container: magic (u32), version (u16), header size (u16), size of its entries (u64), then the
// entries, each a header (kind u16 at 0, its own size u32 at 4, payload size u64 at 8, architecture
// u32 at 28) followed by its payload. Containers may follow one another.
std::vector<FatbinEntry> fatbin_entries(const void* data, std::size_t size) {
  const auto* b = static_cast<const unsigned char*>(data);
  std::vector<FatbinEntry> out;
  std::size_t c = 0;
  while (c + 16 <= size && load<std::uint32_t>(b + c) == kMagic) {
    const std::size_t head = load<std::uint16_t>(b + c + 6);
    const std::uint64_t body = load<std::uint64_t>(b + c + 8);
    if (head < 16 || body > size - c - head) throw std::invalid_argument("fatbin: container runs past the end");
    const std::size_t end = c + head + static_cast<std::size_t>(body);
    for (std::size_t e = c + head; e < end;) {
      if (end - e < 32) throw std::invalid_argument("fatbin: entry header cut short");
      const int kind = load<std::uint16_t>(b + e);
      const std::uint32_t eh = load<std::uint32_t>(b + e + 4);
      const std::uint64_t payload = load<std::uint64_t>(b + e + 8);
      if (eh < 32 || eh > end - e || payload > end - e - eh) throw std::invalid_argument("fatbin: entry runs past its container");
      if (kind == kPtx || kind == kElf) out.push_back({kind == kPtx, static_cast<int>(load<std::uint32_t>(b + e + 28))});
      e += eh + static_cast<std::size_t>(payload);
    }
    c = end;
  }
  if (c == 0) throw std::invalid_argument("fatbin: no fatbin container (bad magic)");
  return out;
}

std::string fatbin_code_for(const std::vector<FatbinEntry>& entries, int cc) {
  int sass = 0, ptx = 0;
  for (const FatbinEntry& e : entries) {
    if (e.arch > cc) continue;
    if (e.ptx) ptx = std::max(ptx, e.arch);
    else if (e.arch / 10 == cc / 10) sass = std::max(sass, e.arch);  // machine code runs within its major version
  }
  if (sass) return "sm_" + std::to_string(sass);
  if (ptx) return "compute_" + std::to_string(ptx) + " (PTX, compiled by the driver)";
  return "";
}

std::string fatbin_summary(const std::vector<FatbinEntry>& entries) {
  std::vector<int> sass, ptx;
  for (const FatbinEntry& e : entries) (e.ptx ? ptx : sass).push_back(e.arch);
  std::string s;
  for (std::vector<int>* v : {&sass, &ptx}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
    for (const int a : *v) s += (s.empty() ? "" : " ") + std::string(v == &sass ? "sm_" : "compute_") + std::to_string(a);
  }
  return s;
}

}  // namespace evk

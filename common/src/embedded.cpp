#include "evk/embedded.hpp"

#include <cstdlib>
#include <mutex>

namespace evk {
namespace {
struct Table {
  std::mutex mu;
  std::vector<const EmbeddedVariant*> all;
};
Table& table() {
  static Table t;  // constructed on first use: registration runs from other static initialisers
  return t;
}
std::vector<std::string> split_lines(const char* s) {
  std::vector<std::string> out;
  std::string cur;
  for (; *s; ++s) {
    if (*s == '\n') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += *s;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}
}  // namespace

void register_embedded_variant(const EmbeddedVariant* v) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.all.push_back(v);
}

std::vector<const EmbeddedVariant*> embedded_variants(const std::string& kernel) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::vector<const EmbeddedVariant*> out;
  for (const auto* v : t.all)
    if (kernel.empty() || kernel == v->kernel) out.push_back(v);
  return out;
}

const EmbeddedVariant* find_embedded_variant(const std::string& source, const std::vector<std::string>& options) {
  if (const char* off = std::getenv("EVK_NO_EMBEDDED_VARIANTS"); off && *off && std::string(off) != "0") return nullptr;
  for (const auto* v : embedded_variants()) {
    if (v->fatbin_size == 0 || source != v->source) continue;
    if (split_lines(v->options) == options) return v;
  }
  return nullptr;
}

}  // namespace evk

#if defined(EVK_HAVE_CUDA)
#include <cstdio>
#include <fstream>

namespace evk {
int embed_variant_main(int argc, char** argv, const std::function<NvrtcRequest(const Variant&)>& request) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s GENOME OUT.cu OUT.opts\n", argc > 0 ? argv[0] : "embed_variant");
    return 2;
  }
  try {
    const Variant v = read_genome_file(argv[1]);
    const NvrtcRequest req = request(v);
    std::ofstream cu(argv[2], std::ios::binary), opts(argv[3], std::ios::binary);
    cu << req.source;
    for (const auto& o : req.options) opts << o << "\n";
    cu.close();
    opts.close();
    if (!cu || !opts) {
      std::fprintf(stderr, "%s: cannot write %s or %s\n", argv[0], argv[2], argv[3]);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}
}  // namespace evk
#endif

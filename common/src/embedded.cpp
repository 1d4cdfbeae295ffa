#include "evk/embedded.hpp"

#include <atomic>
#include <mutex>

namespace evk {
namespace {
struct Table {
  std::mutex mu;
  std::vector<const EmbeddedVariant*> all;
};
std::atomic<bool> g_enabled{true};
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

void set_embedded_variants_enabled(bool on) { g_enabled.store(on); }

const EmbeddedVariant* find_embedded_variant(const std::string& source, const std::vector<std::string>& options) {
  if (!g_enabled.load()) return nullptr;
  for (const auto* v : embedded_variants()) {
    if (v->fatbin_size == 0 || source != v->source) continue;
    if (split_lines(v->options) == options) return v;
  }
  return nullptr;
}

}  // namespace evk

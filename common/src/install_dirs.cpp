#include "evk/install_dirs.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

// Relative install directories, from GNUInstallDirs (set by common/CMakeLists.txt).
#ifndef EVK_INSTALL_BINDIR
#define EVK_INSTALL_BINDIR "bin"
#endif
#ifndef EVK_INSTALL_DATADIR
#define EVK_INSTALL_DATADIR "share"
#endif
#ifndef EVK_INSTALL_COMPATDIR
#define EVK_INSTALL_COMPATDIR "lib/evokernels"
#endif
#ifndef EVK_INSTALL_PYTHONDIR
#define EVK_INSTALL_PYTHONDIR "lib/python3/dist-packages"
#endif

namespace fs = std::filesystem;

namespace evk {

namespace {

int first_object(struct dl_phdr_info* info, std::size_t, void* out) {
  *static_cast<std::uintptr_t*>(out) = info->dlpi_addr;
  return 1;  // the first object is the main program
}

// When `dir` ends with the components of `suffix`, the part before them; else nullopt-like empty
// with ok = false.
bool strip_suffix(const fs::path& dir, const fs::path& suffix, fs::path& prefix) {
  std::vector<fs::path> d(dir.begin(), dir.end()), s(suffix.begin(), suffix.end());
  while (!s.empty() && s.back().empty()) s.pop_back();
  while (!d.empty() && d.back().empty()) d.pop_back();
  if (s.empty() || s.size() > d.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (d[d.size() - s.size() + i] != s[i]) return false;
  prefix.clear();
  for (std::size_t i = 0; i + s.size() < d.size(); ++i) prefix /= d[i];
  return true;
}

}  // namespace

fs::path this_binary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_binary), &info) == 0) return {};
  std::uintptr_t main_base = 0;
  dl_iterate_phdr(first_object, &main_base);
  std::error_code ec;
  if (reinterpret_cast<std::uintptr_t>(info.dli_fbase) == main_base || !info.dli_fname || !*info.dli_fname) {
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path{} : exe;
  }
  fs::path p = fs::weakly_canonical(fs::absolute(info.dli_fname, ec), ec);
  return ec ? fs::path{} : p;
}

fs::path install_prefix() {
  const fs::path bin = this_binary();
  if (bin.empty()) return {};
  const fs::path dir = bin.parent_path();
  const fs::path compat = EVK_INSTALL_COMPATDIR;
  const fs::path layouts[] = {EVK_INSTALL_BINDIR, compat / "niftyreg", compat / "bwa",
                              fs::path(EVK_INSTALL_PYTHONDIR) / "evokernels", fs::path("python") / "evokernels"};
  fs::path prefix;
  for (const auto& l : layouts)
    if (strip_suffix(dir, l, prefix)) return prefix.empty() ? fs::path("/") : prefix;
  return {};
}

fs::path data_dir() {
  std::error_code ec;
  if (const char* s = std::getenv("EVK_SHARE_DIR"); s && *s) return fs::is_directory(s, ec) ? fs::path(s) : fs::path{};
  const fs::path prefix = install_prefix();
  if (prefix.empty()) return {};
  const fs::path d = prefix / EVK_INSTALL_DATADIR / "evokernels";
  return fs::is_directory(d, ec) ? d : fs::path{};
}

fs::path installed_evolved_dir() {
  const fs::path d = data_dir();
  std::error_code ec;
  if (d.empty() || !fs::is_directory(d / "evolved", ec)) return {};
  return d / "evolved";
}

}  // namespace evk

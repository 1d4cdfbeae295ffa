#include "evk/atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <fstream>
#include <mutex>

#include "evk/error.hpp"

namespace fs = std::filesystem;

namespace evk {
namespace {
// Fixed-size table of temp paths for the signal handler (which may only call async-signal-safe
// functions: unlink and _exit).
constexpr int kSlots = 64;
char g_paths[kSlots][4096];
std::atomic<bool> g_used[kSlots];
std::mutex g_mu;

int register_temp(const std::string& p) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (p.size() >= sizeof g_paths[0]) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (!g_used[i].load()) {
      std::memcpy(g_paths[i], p.c_str(), p.size() + 1);
      g_used[i].store(true);
      return i;
    }
  }
  return -1;
}
void unregister_temp(int slot) {
  if (slot >= 0) g_used[slot].store(false);
}
extern "C" void evk_cleanup_handler(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i].load()) ::unlink(g_paths[i]);
  ::_exit(128 + sig);
}
}  // namespace

void install_cleanup_signal_handlers() {
  // A signal the parent set to be ignored stays ignored (nohup, background jobs of a shell).
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    std::signal(sig, evk_cleanup_handler);
  }
}

AtomicOutput::AtomicOutput(fs::path target, const std::string& temp_suffix) : target_(std::move(target)) {
  if (target_.empty()) input_error("-o", "empty output path");
  std::error_code ec;
  if (fs::is_directory(target_, ec)) input_error(target_.string(), "is a directory");
  fs::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) input_error(target_.string(), "directory " + dir.string() + " does not exist");
  std::string temp_name = ".";  // built by appending: GCC 12 warns falsely on "lit" + string (PR105329)
  temp_name.append(target_.filename().string()).append(".tmp").append(std::to_string(::getpid())).append(temp_suffix);
  temp_ = dir / temp_name;
  {
    std::ofstream probe(temp_, std::ios::binary | std::ios::trunc);
    if (!probe) input_error(target_.string(), std::string("cannot write: ") + std::strerror(errno));
  }
  slot_ = register_temp(temp_.string());
}

void check_not_an_input(const fs::path& output, const std::vector<fs::path>& inputs) {
  std::error_code ec;
  const fs::path out = fs::absolute(output, ec).lexically_normal();
  for (const auto& in : inputs) {
    if (in.empty() || in == "-") continue;
    std::error_code e1, e2;
    const bool same = fs::absolute(in, e1).lexically_normal() == out || fs::equivalent(in, output, e2);
    if (same) input_error(output.string(), "is also an input (" + in.string() + "); choose another output name");
  }
}

AtomicOutput::~AtomicOutput() {
  if (!committed_) {
    std::error_code ec;
    fs::remove(temp_, ec);
  }
  unregister_temp(slot_);
}

void AtomicOutput::commit() {
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec) input_error(target_.string(), "cannot write: " + ec.message());
  committed_ = true;
}

}  // namespace evk

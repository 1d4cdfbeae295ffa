// Output files are written to a temporary name beside the target and renamed on success, so a
// failed or interrupted run never leaves a partial file that looks complete.
#pragma once
#include <filesystem>

namespace evk {

class AtomicOutput {
 public:
  // Checks that the target's directory exists and is writable (InputError naming the path if not).
  explicit AtomicOutput(std::filesystem::path target);
  ~AtomicOutput();  // removes the temporary file unless committed
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::filesystem::path& temp_path() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }
  void commit();  // rename temp -> target

 private:
  std::filesystem::path target_, temp_;
  bool committed_ = false;
  int slot_ = -1;  // signal-cleanup slot
};

// Removes registered temporary files on SIGINT/SIGTERM (installed once by run_cli).
void install_cleanup_signal_handlers();

}  // namespace evk

// Output files are written to a temporary name beside the target and renamed on success, so a
// failed or interrupted run never leaves a partial file that looks complete.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace evk {

class AtomicOutput {
 public:
  // Checks that the target's directory exists and is writable (InputError naming the path if not).
  // temp_suffix is appended to the temporary name, for writers that pick the format from the name
  // (".nii.gz": the temporary file is then ".NAME.tmpPID.nii.gz").
  explicit AtomicOutput(std::filesystem::path target, const std::string& temp_suffix = "");
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

// InputError naming `output` when it is the same file as one of the inputs (writing it would
// destroy the input): same path after normalisation, or the same existing file (links).
void check_not_an_input(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs);

}  // namespace evk

// Whether the GPUs have room for the index before a GPU mapper is built: the BWT's occurrence array
// and the sampled suffix array go to every GPU; `cap` (map --gpu-memory, 0: none) stands in for a
// smaller GPU. A GPU without room gets the CPU backend, with this reason, rather than a failed run.
#pragma once
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "core/index.hpp"

namespace evk::barracuda_exact {

std::uint64_t index_device_bytes(const BwtIndex& idx);  // what one GPU holds of the index
// "" when every device has room for the index (its free memory, and cap when nonzero); else the
// first that has not, with the sizes ("GPU 0 (NAME): the index needs 2.9 GiB, 1.0 GiB available").
std::string gpu_index_room(const BwtIndex& idx, const std::vector<int>& devices, std::uint64_t cap);
// Starts CUDA on each device (its primary context: a few tenths of a second on a large GPU) on a
// thread while the caller reads the index; wait() before using them. A device that fails is left to
// the mapper to report (nothing is thrown here). Built without CUDA: nothing to do.
std::future<void> gpu_start(std::vector<int> devices);

}  // namespace evk::barracuda_exact

// evokernels._ext's shared helpers (module.cpp) for its parts (module_reg.cpp): buffers checked
// against the sizes the Python layer promised and the info dict every call returns. No tool's
// header here: module.cpp (stereo) and module_reg.cpp (reg_deform) are compiled each with its own
// tool's include directory (python/CMakeLists.txt).
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

namespace py = pybind11;

namespace evk_py {
// A contiguous buffer of `n` elements of `itemsize` bytes (InputError naming `what` otherwise).
py::buffer_info contiguous(const py::buffer& b, std::size_t n, std::size_t itemsize, const char* what, bool writable);
py::dict info_dict(const std::string& backend, const std::string& kernel, const std::string& device,
                   const std::string& reason);
void def_reg(py::module_& m);  // reg_field, reg_resample, reg_affine, reg_register
}  // namespace evk_py

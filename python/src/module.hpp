// evokernels._ext's shared helpers (module.cpp) for its parts (module_reg.cpp): buffers checked
// against the sizes the Python layer promised, 4x4 affines and image geometry from plain arrays,
// and the info dict every call returns.
#pragma once
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <string>

#include "types.hpp"

namespace py = pybind11;
namespace rd = evk::reg_deform;

namespace evk_py {
// A contiguous buffer of `n` elements of `itemsize` bytes (InputError naming `what` otherwise).
py::buffer_info contiguous(const py::buffer& b, std::size_t n, std::size_t itemsize, const char* what, bool writable);
rd::Mat44 mat44(const std::array<double, 16>& a);
rd::Geometry geometry(const std::array<int, 3>& dims, const std::array<double, 16>& affine, const char* what);
py::dict info_dict(const std::string& backend, const std::string& kernel, const std::string& device,
                   const std::string& reason);
void def_reg(py::module_& m);  // reg_field, reg_resample, reg_affine, reg_register
}  // namespace evk_py

// NiftyReg's affine text format (reg_aladin -aff, reg_f3d/reg_resample -aff): 4 lines of 4 numbers,
// a 4x4 matrix mapping reference world (mm) to floating world (mm), last row 0 0 0 1.
// Reading is strict: exactly 4 non-empty lines of exactly 4 finite numbers, last row 0 0 0 1, and a
// non-singular 3x3 part; anything else is an InputError naming the file. Writing goes through
// evk::AtomicOutput and uses the shortest text that reads back to the same doubles.
#pragma once
#include <filesystem>
#include <string>

#include "core/types.hpp"

namespace evk::reg_deform {

// Parses the text of an affine file; `what` names the source in errors ("aff.txt: ...").
Mat44 parse_affine(const std::string& text, const std::string& what);
Mat44 read_affine(const std::filesystem::path& path);

// Checks a matrix we are about to use or write: finite, last row 0 0 0 1, non-singular.
void check_affine(const Mat44& m, const std::string& what);

// "a b c d\n" x 4, each number the shortest decimal that reads back to the same double.
std::string format_affine(const Mat44& m);
void write_affine(const std::filesystem::path& path, const Mat44& m);

}  // namespace evk::reg_deform

// Where an installed EvoKernels finds its data (<prefix>/share/evokernels: evolved kernel variants),
// with the prefix derived from where the running binary, or the Python module, lies, so an installed
// tree works wherever it is moved. Layouts (relative to the prefix, fixed at configure time):
// the tools in bin/, the drop-in commands in lib/evokernels/{niftyreg,bwa}/, the Python package in
// lib/python3/dist-packages/evokernels/; in a build tree bin/ and python/evokernels/ with share/
// beside them. $EVK_SHARE_DIR overrides.
#pragma once
#include <filesystem>
#include <string>

namespace evk {

// The file of the executable or shared object that holds this code (the Python module, when
// called from it). Empty when it cannot be determined.
std::filesystem::path this_binary();

// <prefix>/share/evokernels for this_binary()'s layout, when that directory exists; else empty.
std::filesystem::path data_dir();

// data_dir()/evolved when it exists; else empty.
std::filesystem::path installed_evolved_dir();

// The install prefix this binary's location implies ("" when it lies in none of the layouts).
std::filesystem::path install_prefix();

}  // namespace evk

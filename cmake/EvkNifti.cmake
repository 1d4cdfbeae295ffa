# nifticlib as the imported target evk::nifti (NIfTI-1 and NIfTI-2 through nifti2_io).
# Debian 12's NIFTIConfig.cmake points at /usr/lib/libznz.so.3.0.0, which the package does not
# install, so we locate the static libraries ourselves (static: nothing to carry to a GPU host).
find_path(EVK_NIFTI_INCLUDE nifti2_io.h PATH_SUFFIXES nifti)
find_library(EVK_NIFTI2_LIB NAMES libnifti2.a nifti2)
find_library(EVK_ZNZ_LIB NAMES libznz.a znz)
if(EVK_NIFTI_INCLUDE AND EVK_NIFTI2_LIB AND EVK_ZNZ_LIB)
  add_library(evk::nifti INTERFACE IMPORTED GLOBAL)
  target_include_directories(evk::nifti INTERFACE ${EVK_NIFTI_INCLUDE})
  target_link_libraries(evk::nifti INTERFACE ${EVK_NIFTI2_LIB} ${EVK_ZNZ_LIB} ZLIB::ZLIB m)
  target_compile_definitions(evk::nifti INTERFACE HAVE_ZLIB)
  set(NIFTI_FOUND TRUE)
else()
  set(NIFTI_FOUND FALSE)
endif()

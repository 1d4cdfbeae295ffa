# `make package`: one Debian package, evokernels_<version>_<arch>.deb, through CPack. Its Depends
# are computed by dpkg-shlibdeps from the ELF files it holds (the Debian runtime libraries we link:
# htslib, OpenCV, libdivsufsort, zlib, libstdc++ ...). CUDA is not a dependency: the CUDA runtime
# is linked statically and NVRTC is opened at run time, so the tools start and run their CPU
# backends anywhere; the description states what the GPU path needs.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME evokernels)
set(CPACK_PACKAGE_VENDOR "EvoKernels")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "EvoKernels maintainers <evokernels@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU tools for brain MRI, short reads and stereo whose CUDA kernels are genetically improved per GPU")
# The extended description (CPack indents each line; "." separates paragraphs).
if(EVK_HAVE_CUDA)
  set(_gpu "GPU requirement: the GPU backends need an NVIDIA GPU with a driver for CUDA
${CUDAToolkit_VERSION_MAJOR}.x or later (machine code for compute capability ${CMAKE_CUDA_ARCHITECTURES}, PTX for newer).
Evolved kernel variants and `gi` also need CUDA's NVRTC library
(libnvrtc.so.${CUDAToolkit_VERSION_MAJOR}, from the CUDA toolkit or NVIDIA's cuda-nvrtc package).
Without them every tool runs its exact CPU backend.")
else()
  set(_gpu "This build has no GPU backends (built without nvcc): every tool runs its
exact CPU backend.")
endif()
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "reg_deform (cubic B-spline deformation fields and resampling of NIfTI brain
volumes), barracuda_exact (exact short-read mapping on a bwa index, SAM/BAM)
and stereo (disparity maps), each with the human-written CUDA kernel, evolved
variants per GPU and a `gi` subcommand that re-evolves the kernel.
.
Drop-in NiftyReg (reg_resample, reg_measure) and bwa (index, aln -n 0, samse)
commands live in /usr/lib/evokernels/{niftyreg,bwa}, off PATH; the Python
module `evokernels` (numpy in and out) is built for Debian's python3.
.
${_gpu}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(EVK_HAVE_PYTHON)
  # The module is built for one Python minor version (its ABI tag); numpy is used through the
  # buffer protocol only, so any numpy works.
  math(EXPR _next_minor "${Python_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
      "python3 (>= ${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}), python3 (<< ${Python_VERSION_MAJOR}.${_next_minor}), python3-numpy")
endif()
set(CPACK_STRIP_FILES ON)
include(CPack)

# evk_add_kernel(<target> SYMBOL <symbol> SOURCE <file.cu> [NVCC_OPTIONS <opt>...] [DEPENDS <file>...])
# (DEPENDS: files the source #includes, so that editing them rebuilds the fatbin)
#
# Embeds one self-contained kernel source file into the static library <target> (created on first
# use) as an evk::KernelImage: the source text (for NVRTC and the GI engine) and, when CUDA is
# enabled, a fatbin compiled by nvcc for every entry of CMAKE_CUDA_ARCHITECTURES (SASS for each,
# plus PTX of the highest so newer GPUs can JIT it). Access from C++:
#     #include "evk_kernels/<symbol>.hpp"      const evk::KernelImage& k = <symbol>();
set(EVK_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/EvkEmbed.cmake)

function(evk_cuda_gencode_flags out)
  set(flags "")
  set(highest 0)
  foreach(a ${CMAKE_CUDA_ARCHITECTURES})
    string(REGEX REPLACE "-(real|virtual)$" "" n "${a}")
    list(APPEND flags "-gencode=arch=compute_${n},code=sm_${n}")
    string(REGEX REPLACE "[^0-9]" "" num "${n}")
    if(num GREATER highest)
      set(highest ${num})
      set(highest_name ${n})
    endif()
  endforeach()
  list(APPEND flags "-gencode=arch=compute_${highest_name},code=compute_${highest_name}")
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

function(evk_add_kernel target)
  cmake_parse_arguments(K "" "SYMBOL;SOURCE" "NVCC_OPTIONS;DEPENDS" ${ARGN})
  get_filename_component(src ${K_SOURCE} ABSOLUTE)
  file(RELATIVE_PATH relsrc ${CMAKE_SOURCE_DIR} ${src})
  set(gen ${CMAKE_BINARY_DIR}/evk_kernels)
  file(MAKE_DIRECTORY ${gen})
  set(fatbin "")
  if(EVK_HAVE_CUDA)
    evk_cuda_gencode_flags(gencode)
    set(fatbin ${gen}/${K_SYMBOL}.fatbin)
    add_custom_command(OUTPUT ${fatbin}
      COMMAND ${CMAKE_CUDA_COMPILER} -fatbin -std=c++17 ${gencode} ${K_NVCC_OPTIONS} -o ${fatbin} ${src}
      DEPENDS ${src} ${K_DEPENDS}
      COMMENT "nvcc -fatbin ${relsrc} (${CMAKE_CUDA_ARCHITECTURES})" VERBATIM)
  endif()
  add_custom_command(OUTPUT ${gen}/${K_SYMBOL}.cpp ${gen}/${K_SYMBOL}.hpp
    COMMAND ${CMAKE_COMMAND} -DSYMBOL=${K_SYMBOL} -DSOURCE=${src} -DRELSOURCE=${relsrc}
            -DFATBIN=${fatbin} -DOUTDIR=${gen} -P ${EVK_EMBED_SCRIPT}
    DEPENDS ${src} ${fatbin} ${EVK_EMBED_SCRIPT}
    COMMENT "embedding kernel ${K_SYMBOL}" VERBATIM)
  if(NOT TARGET ${target})
    add_library(${target} STATIC)
    target_link_libraries(${target} PUBLIC evk_common)
    target_include_directories(${target} PUBLIC ${CMAKE_BINARY_DIR})
  endif()
  target_sources(${target} PRIVATE ${gen}/${K_SYMBOL}.cpp)
  if(EVK_HAVE_CUDA)  # the fatbin alone (`cmake --build . --target <symbol>_fatbin`: make release-check)
    add_custom_target(${K_SYMBOL}_fatbin DEPENDS ${fatbin})
    add_dependencies(${target} ${K_SYMBOL}_fatbin)
  endif()
endfunction()

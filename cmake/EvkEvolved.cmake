# evk_add_evolved_variants(<target> KERNEL <name> DIR <dir> [GENERATOR <exe target>])
#
# Ships the evolved variants of one kernel: every <dir>/*.genome (kernels/evolved/<tool>/) becomes a
# built-in variant of the tool. With CUDA, GENERATOR (a small host program of the app,
# `<exe> GENOME OUT.cu OUT.opts`) applies the genome exactly as the tool's run-time path would and
# writes the NVRTC options that path would use for the default request; nvcc compiles that source
# with those options into a fatbin for CMAKE_CUDA_ARCHITECTURES; a generated translation unit embeds
# the genome file, the source, the options and the fatbin and registers them (evk/embedded.hpp)
# before main(). At run time an identical request loads the fatbin (no NVRTC); anything else
# compiles the genome with NVRTC as before. Without CUDA only the genome text is embedded, so
# `devices` still lists the variants.
#
# <target> is an OBJECT library (an INTERFACE one when there are no genomes): link it into every
# executable that should see the built-in variants (object files are always linked, so the
# registration runs).
set(EVK_EVOLVED_DIR ${CMAKE_CURRENT_LIST_DIR})

function(evk_add_evolved_variants target)
  cmake_parse_arguments(E "" "KERNEL;DIR;GENERATOR" "" ${ARGN})
  file(GLOB genomes CONFIGURE_DEPENDS ${E_DIR}/*.genome)
  list(SORT genomes)
  set(gen ${CMAKE_BINARY_DIR}/evk_evolved/${E_KERNEL})
  file(MAKE_DIRECTORY ${gen})
  set(sources "")
  set(ids "")
  foreach(g ${genomes})
    get_filename_component(id ${g} NAME_WE)
    file(RELATIVE_PATH relg ${CMAKE_SOURCE_DIR} ${g})
    set(cu "")
    set(opts "")
    set(fatbin "")
    if(EVK_HAVE_CUDA)
      set(cu ${gen}/${id}.cu)
      set(opts ${gen}/${id}.opts)
      set(fatbin ${gen}/${id}.fatbin)
      add_custom_command(OUTPUT ${cu} ${opts}
        COMMAND ${E_GENERATOR} ${g} ${cu} ${opts}
        DEPENDS ${g} ${E_GENERATOR}
        COMMENT "applying ${relg}" VERBATIM)
      evk_cuda_gencode_flags(gencode)
      string(REPLACE ";" "|" gencode_arg "${gencode}")
      add_custom_command(OUTPUT ${fatbin}
        COMMAND ${CMAKE_COMMAND} -DNVCC=${CMAKE_CUDA_COMPILER} -DSRC=${cu} -DOPTS=${opts} -DOUT=${fatbin}
                "-DGENCODE=${gencode_arg}" -P ${EVK_EVOLVED_DIR}/EvkNvccVariant.cmake
        DEPENDS ${cu} ${opts} ${EVK_EVOLVED_DIR}/EvkNvccVariant.cmake
        COMMENT "nvcc -fatbin ${relg} (${CMAKE_CUDA_ARCHITECTURES})" VERBATIM)
    endif()
    add_custom_command(OUTPUT ${gen}/${id}.cpp
      COMMAND ${CMAKE_COMMAND} -DKERNEL=${E_KERNEL} -DID=${id} -DGENOME=${g} -DSRC=${cu} -DOPTS=${opts}
              -DFATBIN=${fatbin} -DOUT=${gen}/${id}.cpp -P ${EVK_EVOLVED_DIR}/EvkEmbedVariant.cmake
      DEPENDS ${g} ${cu} ${opts} ${fatbin} ${EVK_EVOLVED_DIR}/EvkEmbedVariant.cmake ${EVK_EVOLVED_DIR}/EvkCArray.cmake
      COMMENT "embedding evolved variant ${E_KERNEL}/${id}" VERBATIM)
    list(APPEND sources ${gen}/${id}.cpp)
    list(APPEND ids ${id})
  endforeach()
  if(sources)
    add_library(${target} OBJECT ${sources})
    target_link_libraries(${target} PUBLIC evk_common)
    evk_target_defaults(${target})
  else()
    add_library(${target} INTERFACE)
  endif()
  list(LENGTH ids n)
  message(STATUS "${E_KERNEL}: ${n} shipped evolved variant(s) ${ids}")
endfunction()

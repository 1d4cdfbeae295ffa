# cmake -P helper of evk_add_evolved_variants: nvcc -fatbin SRC with the NVRTC options in OPTS (one
# per line), translated to nvcc's spelling. An option nvcc has no spelling for here fails the build:
# the fatbin must be compiled exactly as the run-time NVRTC path would compile the same request.
file(STRINGS ${OPTS} nvrtc_opts)
set(args "")
foreach(o ${nvrtc_opts})
  if(o MATCHES "^-D" OR o MATCHES "^--ptxas-options=" OR o MATCHES "^--maxrregcount=[0-9]+$"
     OR o STREQUAL "--extra-device-vectorization")
    list(APPEND args "${o}")
  elseif(o MATCHES "^-Xptxas=(.*)$")
    list(APPEND args "--ptxas-options=${CMAKE_MATCH_1}")
  else()
    message(FATAL_ERROR "${OPTS}: NVRTC option '${o}' has no nvcc translation in cmake/EvkNvccVariant.cmake")
  endif()
endforeach()
string(REPLACE "|" ";" gencode "${GENCODE}")
# (warning 177: the GI prelude declares a tick scope that only -DEVK_GI_TICKS=1 builds use)
execute_process(COMMAND ${NVCC} -fatbin -std=c++17 --diag-suppress=177 ${gencode} ${args} -o ${OUT}.tmp ${SRC}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "nvcc failed on ${SRC} (${args})")
endif()
file(RENAME ${OUT}.tmp ${OUT})

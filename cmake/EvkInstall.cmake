# `make install PREFIX=...` (cmake --install): the three tools in bin/, their man pages (help2man,
# from --help), the evolved kernel variants in share/evokernels/evolved (when kernels/evolved
# exists), docs; the drop-in commands (compat/CMakeLists.txt) in lib/evokernels/{niftyreg,bwa} and
# the Python package (python/CMakeLists.txt) in lib/python3/dist-packages have their own rules.
# Installed binaries find the data from their own location (common/src/install_dirs.cpp), so an
# installed tree may be moved. The build tree mirrors the layout (build/share/evokernels) so the
# tools and the Python module find the same data there.
# `make install`/`make package` build what they install first (target evk_installable), so installing
# does not build every test and benchmark.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(EVK_TOOLS)
foreach(t stereo reg_deform barracuda_exact)
  if(TARGET ${t})
    list(APPEND EVK_TOOLS ${t})
  endif()
endforeach()
install(TARGETS ${EVK_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)

# Evolved kernel variants (genomes + their accounts), when shipped.
set(EVK_EVOLVED_SRC ${CMAKE_SOURCE_DIR}/kernels/evolved)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/evokernels)
if(EXISTS ${EVK_EVOLVED_SRC})
  install(DIRECTORY ${EVK_EVOLVED_SRC}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/evokernels/evolved COMPONENT tools)
  if(NOT EXISTS ${CMAKE_BINARY_DIR}/share/evokernels/evolved)
    file(CREATE_LINK ${EVK_EVOLVED_SRC} ${CMAKE_BINARY_DIR}/share/evokernels/evolved SYMBOLIC)
  endif()
endif()
file(WRITE ${CMAKE_BINARY_DIR}/share/evokernels/README
"EvoKernels ${PROJECT_VERSION} data. evolved/<tool>/*.genome: the evolved kernel variants shipped with
this version (genome files with provenance, docs/FORMATS.md); the tools load them beside the ones
built into them. Variants evolved on this machine by `<tool> gi` go to the overlay directory
($EVK_OVERLAY_DIR, else ~/.local/share/evokernels/evolved) and take precedence.
")
install(FILES ${CMAKE_BINARY_DIR}/share/evokernels/README DESTINATION ${CMAKE_INSTALL_DATADIR}/evokernels COMPONENT tools)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/evokernels COMPONENT tools)

# Man pages from each tool's --help (and every subcommand's), through Debian's help2man.
find_program(EVK_HELP2MAN help2man)
if(EVK_HELP2MAN AND EVK_TOOLS)
  set(pages)
  foreach(t ${EVK_TOOLS})
    set(page ${CMAKE_BINARY_DIR}/man/${t}.1)
    add_custom_command(OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/make-man.sh $<TARGET_FILE:${t}> ${page}
      DEPENDS ${t} ${CMAKE_SOURCE_DIR}/scripts/make-man.sh
      COMMENT "help2man ${t}.1" VERBATIM)
    list(APPEND pages ${page})
  endforeach()
  add_custom_target(evk_man ALL DEPENDS ${pages})  # ALL: the install test (ctest) checks them
  add_dependencies(evk_installable evk_man)
  install(FILES ${pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
else()
  message(STATUS "EvoKernels: help2man not found; `make install` installs no man pages (apt install help2man)")
endif()

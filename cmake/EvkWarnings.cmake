# Warnings and sanitizers for our own C++ targets: call evk_target_defaults(target).
function(evk_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-missing-field-initializers>)
  if(EVK_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(EVK_HAVE_CUDA)
    target_compile_definitions(${target} PRIVATE EVK_HAVE_CUDA=1)
  endif()
endfunction()

# What makes a target a berth backend module, in this tree and in a
# vendor's project (installed with berth's CMake package): a MODULE
# library named libberth-NAME.so that exports only its entry symbol and
# links nothing from libberth (all it needs from the engine arrives
# through the ABI). Every symbol it needs must resolve at link time,
# except under ThreadSanitizer: clang links its runtime into executables
# only, so an instrumented module finds __tsan_* in the program that
# loads it. (Apple's linker refuses undefined symbols in a module by
# default, and has no --no-undefined.)
function(berth_module_properties target)
  set_target_properties(${target} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden
    C_STANDARD 11 C_STANDARD_REQUIRED ON)
  if(NOT BERTH_TSAN AND NOT APPLE)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()

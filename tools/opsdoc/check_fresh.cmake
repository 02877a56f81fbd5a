# Fails when DOC differs from what OPSDOC prints, showing the difference
# and the command that regenerates DOC.
execute_process(COMMAND ${OPSDOC} OUTPUT_FILE ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "opsdoc failed (${rc})")
endif()
file(READ ${OUT} want)
if(EXISTS ${DOC})
  file(READ ${DOC} have)
else()
  set(have "")
endif()
if(NOT have STREQUAL want)
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u ${DOC} ${OUT})
  endif()
  message(FATAL_ERROR "${DOC} is stale: it differs from the op table "
    "(include/berth/ops.def). Regenerate it with:\n"
    "  cmake --build build --target opsdoc && build/tools/opsdoc/opsdoc > docs/backend-ops.md")
endif()

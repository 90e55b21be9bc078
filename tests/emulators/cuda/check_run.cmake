# SPDX-License-Identifier: Apache-2.0
# Runs a command and checks its exit status and output.
#   cmake -DCOMMAND=<program> [-DARGS=a@@b] [-DMUST_MATCH=re1@@re2]
#         [-DMUST_NOT_MATCH=re] [-DEXPECT_RC=0] -P check_run.cmake
# Lists use "@@" as the separator (add_test would split on ';').
foreach(var ARGS MUST_MATCH MUST_NOT_MATCH)
  string(REPLACE "@@" ";" ${var} "${${var}}")
endforeach()
execute_process(COMMAND ${COMMAND} ${ARGS}
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE rc)
message("${output}")
# LeakSanitizer's own stop-the-world tracer now and then crashes at exit
# ("Tracer caught signal 11") before it has looked for leaks: a fault of the
# sanitizer runtime, not of the program, so that one case runs once more. A
# leak report is never retried (docs/reliability.md).
if(output MATCHES "Tracer caught signal [0-9]+" AND
   output MATCHES "LeakSanitizer has encountered a fatal error" AND
   NOT output MATCHES "detected memory leaks")
  message("check_run: LeakSanitizer's tracer crashed at exit; running ${COMMAND} once more")
  execute_process(COMMAND ${COMMAND} ${ARGS}
                  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE rc)
  message("${output}")
endif()
set(failed "")
if(DEFINED EXPECT_RC AND NOT rc STREQUAL EXPECT_RC)
  string(APPEND failed "exit status ${rc}, expected ${EXPECT_RC}\n")
endif()
foreach(re IN LISTS MUST_MATCH)
  if(NOT output MATCHES "${re}")
    string(APPEND failed "output does not match: ${re}\n")
  endif()
endforeach()
foreach(re IN LISTS MUST_NOT_MATCH)
  if(output MATCHES "${re}")
    string(APPEND failed "output matches: ${re}\n")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${COMMAND}:\n${failed}")
endif()

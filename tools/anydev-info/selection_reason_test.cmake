# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-info.selection_reason (tools/CMakeLists.txt, run with
# ANYDEV_BACKEND=cuda): when the default selection fails, anydev-info's
# summary line on stderr carries the reason, which the message has on its
# later lines (`... ANYDEV_BACKEND="cuda":` then `cuda: unavailable: ...`),
# instead of stopping at the colon. Skipped where cuda works.
#   cmake -DINFO=path/to/anydev-info -P selection_reason_test.cmake
execute_process(COMMAND "${INFO}" --json RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(rc EQUAL 0)
  message("SKIPPED: the default selection works with ANYDEV_BACKEND=$ENV{ANYDEV_BACKEND} here")
  return()
endif()
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "anydev-info --json exited ${rc}, expected 2 (the selection fails):\n${err}")
endif()
string(JSON message GET "${json}" default_selection error message)
string(JSON status GET "${json}" default_selection error status)

string(REGEX MATCH "anydev-info: the default selection \\(DeviceContext\\(\\)\\) failed: [^\n]*"
       summary "${err}")
if(NOT summary)
  message(FATAL_ERROR "no summary line on stderr:\n${err}")
endif()
if(summary MATCHES ":$")
  message(FATAL_ERROR "the summary line stops at a colon, without the reason:\n${summary}")
endif()
# Every line of the message, stripped, is on the summary line, in order, and
# the last one (the reason) ends it.
string(REPLACE "\n" ";" lines "${message}")
set(rest "${summary}")
set(last "")
foreach(line IN LISTS lines)
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  string(FIND "${rest}" "${line}" at)
  if(at LESS 0)
    message(FATAL_ERROR "the summary line lacks '${line}' of the message:\n${summary}\nmessage:\n${message}")
  endif()
  string(LENGTH "${line}" length)
  math(EXPR after "${at} + ${length}")
  string(SUBSTRING "${rest}" ${after} -1 rest)
  set(last "${line}")
endforeach()
if(NOT rest STREQUAL "")
  message(FATAL_ERROR "the summary line does not end with the reason '${last}':\n${summary}")
endif()
if(NOT summary MATCHES ": ${status}: ")
  message(FATAL_ERROR "the summary line does not name the status ${status}:\n${summary}")
endif()
message(STATUS "summary: ${summary}")

# SPDX-License-Identifier: Apache-2.0
# cmake -DWORKLOAD=<anydev-trace-workload> -DDIR=<scratch folder> -DCASE=<case>
# -P check_trace_files.cmake: how ANYDEV_TRACE writes its file
# (docs/reliability.md, "Files anydev writes").
#   planted_symlink: a symlink planted at <trace>.tmp (the temporary name an
#     earlier version used) and at other predictable names must not be
#     followed: their target keeps its contents, the trace is a regular file.
#   unwritable: a trace path in a missing folder logs its error once, although
#     the file is written several times (at the last context and at exit).
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
if(CASE STREQUAL "planted_symlink")
  set(trace "${DIR}/trace.json")
  file(WRITE "${DIR}/victim" "precious")
  foreach(name trace.json.tmp trace.json~ .trace.json.swp)
    file(CREATE_LINK "${DIR}/victim" "${DIR}/${name}" SYMBOLIC)
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ANYDEV_TRACE=${trace} ${WORKLOAD}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the workload failed (${rc}):\n${out}${err}")
  endif()
  file(READ "${DIR}/victim" victim)
  if(NOT victim STREQUAL "precious")
    message(FATAL_ERROR "the trace followed a planted symlink and overwrote its target")
  endif()
  if(IS_SYMLINK "${trace}" OR NOT EXISTS "${trace}")
    message(FATAL_ERROR "${trace} is not a regular file")
  endif()
  file(READ "${trace}" head LIMIT 40)
  if(NOT head MATCHES "traceEvents")
    message(FATAL_ERROR "${trace} is not the trace: ${head}")
  endif()
  file(GLOB leftovers "${DIR}/trace.json.??????")
  if(leftovers)
    message(FATAL_ERROR "temporary files left behind: ${leftovers}")
  endif()
  message(STATUS "the planted symlinks were not followed; the trace is a regular file")
elseif(CASE STREQUAL "unwritable")
  set(trace "${DIR}/missing/trace.json")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ANYDEV_TRACE=${trace} ${WORKLOAD}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the workload failed (${rc}):\n${out}${err}")
  endif()
  string(REGEX MATCHALL "trace: [^\n]*" lines "${err}")
  list(LENGTH lines count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "expected the trace error once, got ${count} lines:\n${err}")
  endif()
  if(NOT err MATCHES "missing/trace.json")
    message(FATAL_ERROR "the error does not name the path:\n${err}")
  endif()
  message(STATUS "logged once: ${lines}")
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()

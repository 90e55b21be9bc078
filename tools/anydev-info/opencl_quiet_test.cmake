# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-info.opencl_quiet (tools/CMakeLists.txt, run with
# ANYDEV_BACKEND=opencl): on an OpenCL CPU device such as PoCL, where a host
# buffer's pages being pageable does not matter, `anydev-info --list` prints
# no warning about page-locking or RLIMIT_MEMLOCK at the default log level;
# at info level the fact is said once. Skipped without an OpenCL device.
#   cmake -DINFO=path/to/anydev-info -P opencl_quiet_test.cmake
unset(ENV{ANYDEV_LOG_LEVEL})
execute_process(COMMAND "${INFO}" --list RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT out MATCHES "(^|\n)\\[opencl:0\\] ")
  message("SKIPPED: no OpenCL device listed (${rc}):\n${out}${err}")
  return()
endif()
if(err MATCHES "page-locked|pageable|RLIMIT_MEMLOCK|\\[warning\\]")
  message(FATAL_ERROR "anydev-info --list on opencl warned at the default log level:\n${err}")
endif()

set(ENV{ANYDEV_LOG_LEVEL} info)
execute_process(COMMAND "${INFO}" --list RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
string(REGEX MATCHALL "opencl: host memory is pageable[^\n]*" said "${err}")
list(LENGTH said count)
if(NOT count EQUAL 1 OR err MATCHES "RLIMIT_MEMLOCK")
  message(FATAL_ERROR "at info level the pageable host memory should be said once, without "
                      "RLIMIT_MEMLOCK advice; said ${count} times:\n${err}")
endif()
message(STATUS "default level: no warning; info: ${said}")

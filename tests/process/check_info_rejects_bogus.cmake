# SPDX-License-Identifier: Apache-2.0
# cmake -DANYDEV_INFO=<anydev-info> -P check_info_rejects_bogus.cmake, with
# ANYDEV_BACKEND=bogus in the environment: anydev-info must exit with a
# non-zero status (not a crash) and say "bogus" and every known backend.
if(NOT "$ENV{ANYDEV_BACKEND}" STREQUAL "bogus")
  message(FATAL_ERROR "run through ctest: ANYDEV_BACKEND must be \"bogus\", is \"$ENV{ANYDEV_BACKEND}\"")
endif()
execute_process(COMMAND "${ANYDEV_INFO}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
set(all "${out}${err}")
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "anydev-info did not exit normally (${rc}); output:\n${all}")
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "anydev-info exited with 0 although ANYDEV_BACKEND=bogus; output:\n${all}")
endif()
foreach(word bogus cpu cuda hip level_zero opencl)
  string(FIND "${all}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "anydev-info's output does not mention \"${word}\":\n${all}")
  endif()
endforeach()
message(STATUS "anydev-info exited with ${rc} and named bogus and every known backend")

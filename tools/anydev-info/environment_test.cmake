# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-info.environment (tools/CMakeLists.txt): every variable
# that docs/environment.md's table says the core or a backend reads is in
# anydev-info's environment list, and the hip library's default names the
# order the backend tries (libamdhip64.so.7, .so.6, .so.5, then .so).
#   cmake -DINFO=path/to/anydev-info -DDOC=docs/environment.md -P environment_test.cmake
execute_process(COMMAND "${INFO}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "anydev-info failed (${rc}): ${err}")
endif()
file(STRINGS "${DOC}" rows REGEX "^\\| \\[`ANYDEV_[A-Z0-9_]+`\\]")
set(checked 0)
foreach(row IN LISTS rows)
  if(NOT row MATCHES "^\\| \\[`(ANYDEV_[A-Z0-9_]+)`\\]\\([^)]*\\) \\| ([^|]+) \\|")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  set(reader "${CMAKE_MATCH_2}")
  if(NOT reader MATCHES "^core|backend *$")
    continue()  # a test binary's or a script's variable
  endif()
  math(EXPR checked "${checked} + 1")
  if(NOT out MATCHES "\n  ${name} ")
    message(FATAL_ERROR "${DOC} says ${reader} reads ${name}, but anydev-info does not list it:\n${out}")
  endif()
endforeach()
if(checked LESS 10)
  message(FATAL_ERROR "only ${checked} variables read from ${DOC}: has its table changed form?")
endif()
if(NOT out MATCHES "\n  ANYDEV_HIP_LIBRARY [^\n]*unset: libamdhip64[.]so[.]7, [.]so[.]6, [.]so[.]5, then libamdhip64[.]so")
  message(FATAL_ERROR "anydev-info's ANYDEV_HIP_LIBRARY line does not name the libraries tried:\n${out}")
endif()
message(STATUS "${checked} variables of ${DOC} listed by anydev-info")

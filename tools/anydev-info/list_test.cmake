# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-info.list (tools/CMakeLists.txt): --list prints one line
# per device, "[backend:index] name, memory", with the cpu device among them;
# --version prints the library version; --json with --list is refused.
#   cmake -DINFO=path/to/anydev-info -P list_test.cmake
execute_process(COMMAND "${INFO}" --list
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "anydev-info --list failed (${rc}): ${err}")
endif()
string(REGEX REPLACE "\n$" "" body "${out}")
string(REPLACE "\n" ";" lines "${body}")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^\\[[a-z0-9_]+:[0-9]+\\] (.+, [0-9.]+ (B|KiB|MiB|GiB|TiB)|cannot be opened: .+)$")
    message(FATAL_ERROR "not a device line: '${line}' in:\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "(^|\n)\\[cpu:0\\] ")
  message(FATAL_ERROR "the cpu device is not listed:\n${out}")
endif()
if(out MATCHES "Backends|Environment|default selection")
  message(FATAL_ERROR "--list printed more than the device lines:\n${out}")
endif()

execute_process(COMMAND "${INFO}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^anydev [0-9]+\\.[0-9]+\\.[0-9]+\n$")
  message(FATAL_ERROR "anydev-info --version (${rc}): '${out}'")
endif()

execute_process(COMMAND "${INFO}" --list --json RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 64 OR NOT err MATCHES "--json and --list")
  message(FATAL_ERROR "--list --json should be refused with status 64, got ${rc}: ${err}")
endif()

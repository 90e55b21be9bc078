# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-bench.options (tools/CMakeLists.txt):
# --opt=value, --version, the JSON's schema and anydev versions, --plot checked
# before measuring, progress on stderr for a run over a second (also with
# --json), and a plot whose legend follows pattern width with every series
# styled apart. No timing is asserted: the progress run lasts over a second
# because --min-time is a lower bound on each of its three measurements.
#   cmake -DBENCH=path/to/anydev-bench -DOUT=scratch/folder -P options_test.cmake
file(MAKE_DIRECTORY "${OUT}")

# --opt=value, and the JSON's versions.
execute_process(
  COMMAND "${BENCH}" --backend=cpu --sizes=4K --ops=fill_4 --min-time=0 --json
  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--opt=value run failed (${rc}): ${err}")
endif()
string(JSON schema GET "${json}" schema_version)
string(JSON version GET "${json}" anydev_version)
string(JSON count LENGTH "${json}" results)
if(NOT schema EQUAL 1 OR NOT version MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$" OR NOT count EQUAL 1)
  message(FATAL_ERROR "schema_version ${schema}, anydev_version '${version}', ${count} results: ${json}")
endif()
execute_process(COMMAND "${BENCH}" --json=yes RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 64 OR NOT err MATCHES "--json takes no value")
  message(FATAL_ERROR "--json=yes should be refused with status 64, got ${rc}: ${err}")
endif()

# --version.
execute_process(COMMAND "${BENCH}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^anydev-bench \\(anydev [0-9]+\\.[0-9]+\\.[0-9]+\\)\n$")
  message(FATAL_ERROR "anydev-bench --version (${rc}): '${out}'")
endif()

# An unwritable --plot fails before anything is measured (nothing on stdout).
foreach(bad "${OUT}/no-such-folder/plot.svg" "${OUT}")
  execute_process(
    COMMAND "${BENCH}" --backend cpu --sizes 4K --ops fill_1 --min-time 0 --plot "${bad}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1 OR NOT out STREQUAL "" OR NOT err MATCHES "--plot")
    message(FATAL_ERROR "--plot ${bad}: expected status 1 before measuring, got ${rc}: '${out}' ${err}")
  endif()
endforeach()

# Progress on stderr with --json (stderr is not a terminal here: one line per
# step), and the plot of the four fills.
set(plot "${OUT}/fills.svg")
file(REMOVE "${plot}")
execute_process(
  COMMAND "${BENCH}" --backend cpu --sizes 4K,8K,16K --ops fill_16,fill_8,fill_4,fill_1
          --min-time 0.1 --json --plot "${plot}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the fills run failed (${rc}): ${err}")
endif()
# 12 measurements of at least 0.1 s: over a second, so the last step shows.
if(NOT err MATCHES "anydev-bench: 12/12 fill_1 16 KiB")
  message(FATAL_ERROR "no progress on stderr for a run over a second: '${err}'")
endif()
if(NOT err MATCHES "anydev-bench: [0-9]+/12 [a-z_0-9]+ [0-9]+ KiB, about [0-9]+ (s|min) left")
  message(FATAL_ERROR "progress lines carry no estimate: '${err}'")
endif()
string(JSON count LENGTH "${json}" results)
if(NOT count EQUAL 12)
  message(FATAL_ERROR "stdout is not the JSON of 12 results: ${json}")
endif()
file(READ "${plot}" svg)
# Legend in pattern width order, not string order (fill_16 before fill_4).
set(last -1)
foreach(name fill_1 fill_4 fill_8 fill_16)
  string(FIND "${svg}" ">anydev ${name}<" at)
  if(at LESS_EQUAL last)
    message(FATAL_ERROR "legend entry ${name} is missing or out of width order: ${svg}")
  endif()
  set(last ${at})
endforeach()
# Every series drawn in its own style: colour and dash pattern, and markers of
# different shapes, so overlapping curves stay visible.
string(REGEX MATCHALL "<polyline fill=\"none\" stroke=\"[^\"]+\" stroke-width=\"2\"( stroke-dasharray=\"[^\"]+\")?"
       styles "${svg}")
list(LENGTH styles drawn)
list(REMOVE_DUPLICATES styles)
list(LENGTH styles distinct)
if(NOT drawn EQUAL 5 OR NOT distinct EQUAL 5)
  message(FATAL_ERROR "expected 5 series (4 fills, memset) in 5 styles, got ${drawn} in ${distinct}: ${svg}")
endif()
string(REGEX MATCHALL "stroke-dasharray=\"[^\"]+\"" dashes "${svg}")
list(REMOVE_DUPLICATES dashes)
list(LENGTH dashes dash_kinds)
if(dash_kinds LESS 4)
  message(FATAL_ERROR "the series share dash patterns (${dashes}): ${svg}")
endif()
foreach(marker "<circle " "<rect x=" "<polygon ")
  string(FIND "${svg}" "${marker}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no ${marker} marker: the fills are not told apart by marker shape: ${svg}")
  endif()
endforeach()

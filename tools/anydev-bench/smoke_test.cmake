# SPDX-License-Identifier: Apache-2.0
# ctest smoke test of anydev-bench (tools/CMakeLists.txt): runs it on the cpu
# backend with tiny sizes and checks that the table, the JSON object and the
# SVG plot come out whole. No timing is asserted.
#   cmake -DBENCH=path/to/anydev-bench -DOUT=scratch/folder -P smoke_test.cmake
file(MAKE_DIRECTORY "${OUT}")
set(plot "${OUT}/plot.svg")
file(REMOVE "${plot}")

execute_process(
  COMMAND "${BENCH}" --backend cpu --sizes 4K,64K --ops copy_h2d,copy_d2d,fill_1,fill_16
          --min-time 0.001 --json --plot "${plot}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "anydev-bench --json failed (${rc}): ${err}")
endif()
string(JSON count LENGTH "${json}" results)
if(NOT count EQUAL 8)
  message(FATAL_ERROR "expected 8 results (4 operations x 2 sizes), got ${count}: ${json}")
endif()
string(JSON op GET "${json}" results 3 operation)
string(JSON bytes GET "${json}" results 3 bytes)
if(NOT op STREQUAL "copy_d2d" OR NOT bytes EQUAL 65536)
  message(FATAL_ERROR "results[3] is ${op} of ${bytes} bytes, expected copy_d2d of 65536")
endif()
string(JSON backend GET "${json}" backend)
if(NOT backend STREQUAL "cpu")
  message(FATAL_ERROR "backend is '${backend}', expected cpu")
endif()
file(READ "${plot}" svg)
if(NOT svg MATCHES "^<svg " OR NOT svg MATCHES "</svg>\n$" OR NOT svg MATCHES "anydev fill_16")
  message(FATAL_ERROR "the plot is not a whole SVG with the fill_16 series: ${svg}")
endif()

execute_process(
  COMMAND "${BENCH}" --backend cpu --sizes 4K --ops fill_4 --min-time 0
  RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT table MATCHES "fill_4 +4 KiB")
  message(FATAL_ERROR "the table run failed (${rc}) or lacks the fill_4 row: ${table} ${err}")
endif()

execute_process(
  COMMAND "${BENCH}" --sizes 4K,1000 RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 64 OR NOT err MATCHES "1000")
  message(FATAL_ERROR "--sizes 4K,1000 should be refused with status 64 naming it, got ${rc}: ${err}")
endif()

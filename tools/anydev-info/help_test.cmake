# SPDX-License-Identifier: Apache-2.0
# ctest tools.anydev-info.help (tools/CMakeLists.txt): --help names every
# option the parser knows (each "-x" or "--xyz" string literal of main.cpp,
# aliases such as -L included), and the parser accepts every option --help
# names.
#   cmake -DINFO=path/to/anydev-info -DSOURCE=path/to/main.cpp -P help_test.cmake
execute_process(COMMAND "${INFO}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE help)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "anydev-info --help failed (${rc}):\n${help}")
endif()

file(READ "${SOURCE}" source)
string(REGEX MATCHALL "\"--?[A-Za-z][A-Za-z0-9-]*\"" literals "${source}")
list(REMOVE_DUPLICATES literals)
list(LENGTH literals count)
if(count LESS 4)
  message(FATAL_ERROR "found only ${count} option literals in ${SOURCE}: ${literals}")
endif()
foreach(literal IN LISTS literals)
  string(REPLACE "\"" "" option "${literal}")
  if(NOT help MATCHES "(^|[ [,])${option}([],\n ]|$)")
    message(FATAL_ERROR "the parser knows ${option} but --help does not name it:\n${help}")
  endif()
endforeach()

# Each option of the help's option list, alone, is accepted (not 64).
string(REGEX MATCHALL "\n  -[^\n]*" option_lines "${help}")
foreach(line IN LISTS option_lines)
  # The label column: "--name" or "--name, -x".
  string(REGEX MATCH "^\n  (-[^ ,]+(, -[^ ,]+)*)" label "${line}")
  string(REPLACE ", " ";" names "${CMAKE_MATCH_1}")
  foreach(option IN LISTS names)
    execute_process(COMMAND "${INFO}" ${option} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(rc EQUAL 64)
      message(FATAL_ERROR "--help names ${option} but the parser refuses it: ${err}")
    endif()
  endforeach()
endforeach()
message(STATUS "--help names all ${count} options of the parser: ${literals}")

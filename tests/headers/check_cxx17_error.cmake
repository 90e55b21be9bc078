# SPDX-License-Identifier: Apache-2.0
# headers.cxx17_error (cmake -P): each anydev C++ header, included alone by a
# one-line translation unit compiled with -std=c++17, must fail with exactly
# one error: the #error that names C++20 and points to the C ABI
# (include/anydev/detail/require_cxx20.hpp). Before that #error existed, the
# first error was "'bit_cast' is not a member of 'std'", followed by ~200 more.
# A control compiles anydev.hpp with -std=c++20, which must succeed, so that
# the failures above are the language check and not something else.
#
#   -DCXX=<C++ compiler> -DINCLUDE_DIR=<repo>/include -DWORK_DIR=<scratch folder>
foreach(_var CXX INCLUDE_DIR WORK_DIR)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "check_cxx17_error.cmake: pass -D${_var}=...")
  endif()
endforeach()

file(GLOB _headers RELATIVE ${INCLUDE_DIR}
  ${INCLUDE_DIR}/anydev/*.hpp ${INCLUDE_DIR}/anydev/detail/*.hpp)
list(LENGTH _headers _count)
if(_count LESS 2)
  message(FATAL_ERROR "check_cxx17_error.cmake: found ${_count} headers under ${INCLUDE_DIR}/anydev")
endif()
file(MAKE_DIRECTORY ${WORK_DIR})

# Compiles `#include <header>` with `std`; sets out_rc and out_text.
function(compile_one header std out_rc out_text)
  string(MAKE_C_IDENTIFIER "${header}_${std}" _name)
  set(_source ${WORK_DIR}/${_name}.cpp)
  file(WRITE ${_source} "#include <${header}>\n")
  execute_process(
    COMMAND ${CXX} -std=${std} -fsyntax-only -I${INCLUDE_DIR} ${_source}
    RESULT_VARIABLE _rc
    OUTPUT_VARIABLE _out
    ERROR_VARIABLE _out)
  set(${out_rc} "${_rc}" PARENT_SCOPE)
  set(${out_text} "${_out}" PARENT_SCOPE)
endfunction()

compile_one(anydev/anydev.hpp c++20 _rc _text)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "control: anydev/anydev.hpp does not compile with -std=c++20 "
                      "(exit ${_rc}):\n${_text}")
endif()

set(_failures 0)
foreach(_header IN LISTS _headers)
  compile_one(${_header} c++17 _rc _text)
  string(REGEX MATCHALL "error:" _errors "${_text}")
  list(LENGTH _errors _error_count)
  set(_problem "")
  if(_rc EQUAL 0)
    set(_problem "compiled without error")
  elseif(NOT _text MATCHES "needs C\\+\\+20")
    set(_problem "the error does not say that anydev needs C++20")
  elseif(NOT _text MATCHES "#include <anydev/anydev.h>")
    set(_problem "the error does not point to the C ABI (anydev/anydev.h)")
  elseif(NOT _error_count EQUAL 1)
    set(_problem "${_error_count} errors instead of exactly the one #error")
  endif()
  if(_problem)
    message(SEND_ERROR "${_header} with -std=c++17: ${_problem}; compiler output:\n${_text}")
    math(EXPR _failures "${_failures} + 1")
  else()
    message(STATUS "${_header} with -std=c++17: the one error names C++20 and the C ABI")
  endif()
endforeach()
if(_failures GREATER 0)
  message(FATAL_ERROR "${_failures} of ${_count} headers fail the C++17 check")
endif()
message(STATUS "all ${_count} headers stop under -std=c++17 with the C++20 #error alone")

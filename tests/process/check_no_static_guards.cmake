# SPDX-License-Identifier: Apache-2.0
# cmake -DLIBRARY=<libanydev.so> -DREADELF=<readelf> -P check_no_static_guards.cmake
#
# libanydev.so (core and built-in cpu backend) must hold no lazily
# initialised function-local static outside thread-local storage: its C++
# guard is a lock, and a fork() while another thread runs the initializer
# leaves that lock held in the child, whose first use then blocks forever.
# Such statics are made with ProcessObject
# (src/support/fork_guard.h), an atomic, or at load time instead. Thread-local
# guards are per thread and harmless.
execute_process(COMMAND "${READELF}" -sW "${LIBRARY}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${READELF} -sW ${LIBRARY} failed (${rc}): ${err}")
endif()
string(FIND "${out}" "Symbol table '.symtab'" at)
if(at EQUAL -1)
  message(STATUS "SKIPPED: ${LIBRARY} has no .symtab (stripped): its static guards cannot be listed")
  return()
endif()
string(REPLACE "\n" ";" lines "${out}")
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "_ZGV" AND NOT line MATCHES " TLS ")
    string(REGEX REPLACE "^.* " "" name "${line}")
    list(APPEND found "${name}")
  endif()
endforeach()
if(found)
  list(REMOVE_DUPLICATES found)
  list(JOIN found "\n  " listing)
  message(FATAL_ERROR "${LIBRARY} has lazily initialised statics with a C++ guard, which a "
                      "fork() can leave locked in the child (use ProcessObject, an atomic or "
                      "load-time initialisation; c++filt names them):\n  ${listing}")
endif()
message(STATUS "${LIBRARY}: no guarded function-local static outside thread-local storage")

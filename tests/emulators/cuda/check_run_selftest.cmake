# SPDX-License-Identifier: Apache-2.0
# Checks check_run.cmake's one retry: a command whose first run ends with
# LeakSanitizer's tracer crash passes when its second run does; one whose
# output also reports leaks fails without a second run.
#   cmake -DCHECK_RUN=<check_run.cmake> -DWORK_DIR=<folder> -P check_run_selftest.cmake
# Run as the fake command (FAKE_MARKER set): the first run prints the crash
# (with a leak report when FAKE_LEAK is 1) and fails, later runs succeed.
if(DEFINED FAKE_MARKER)
  if(NOT EXISTS "${FAKE_MARKER}")
    file(WRITE "${FAKE_MARKER}" "")
    set(leak "")
    if(FAKE_LEAK)
      set(leak "ERROR: LeakSanitizer: detected memory leaks\n")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E echo
                    "first run\n${leak}Tracer caught signal 11: addr=0x0\nLeakSanitizer has encountered a fatal error.")
    execute_process(COMMAND ${CMAKE_COMMAND} -E false)
    message(FATAL_ERROR "first run fails")
  endif()
  message("second run")
  return()
endif()

function(run_case leak expect_pass expect_runs)
  set(marker "${WORK_DIR}/check-run-selftest-${leak}.marker")
  file(REMOVE "${marker}")
  execute_process(COMMAND ${CMAKE_COMMAND} -DCOMMAND=${CMAKE_COMMAND}
                          "-DARGS=-DFAKE_MARKER=${marker}@@-DFAKE_LEAK=${leak}@@-P@@${CMAKE_CURRENT_LIST_FILE}"
                          -DEXPECT_RC=0 "-DMUST_MATCH=second run" -P ${CHECK_RUN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  if(expect_pass AND NOT rc EQUAL 0)
    message(FATAL_ERROR "leak=${leak}: check_run failed, expected a retry that passes:\n${out}")
  endif()
  if(NOT expect_pass AND rc EQUAL 0)
    message(FATAL_ERROR "leak=${leak}: check_run passed, expected a failure:\n${out}")
  endif()
  string(REGEX MATCHALL "running [^\n]* once more" retries "${out}")
  list(LENGTH retries n)
  if(NOT n EQUAL expect_runs)
    message(FATAL_ERROR "leak=${leak}: ${n} retries, expected ${expect_runs}:\n${out}")
  endif()
endfunction()

run_case(0 TRUE 1)   # the tracer crashed: one more run, which passes
run_case(1 FALSE 0)  # a leak report: never retried, the check fails
message("check_run self-test: passed")

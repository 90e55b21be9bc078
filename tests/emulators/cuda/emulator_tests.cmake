# SPDX-License-Identifier: Apache-2.0
# ctest entries for the CUDA emulator and for the cuda backend run against it.
#
# The conformance runs need targets defined elsewhere (anydev-conformance-tests
# in tests/conformance, anydev-info in tools), possibly after this folder is
# read, so they are added when the top-level folder is done.

find_package(GTest QUIET)
if(GTest_FOUND)
  add_executable(anydev-cuda-emulator-tests emulator_test.cpp)
  target_include_directories(anydev-cuda-emulator-tests PRIVATE "${ANYDEV_CUDA_EMULATOR_INCLUDE_DIR}" "${ANYDEV_EMULATOR_CORE_DIR}")
  target_link_libraries(anydev-cuda-emulator-tests PRIVATE
    anydev-cuda-emulator GTest::gtest anydev_warnings Threads::Threads)
  add_test(NAME cuda-emulator-selftest COMMAND anydev-cuda-emulator-tests)
  add_dependencies(anydev-emulator-selftests anydev-cuda-emulator-tests)

endif()

function(anydev_cuda_emulator_add_tests emulator check_script)
  set(run ${CMAKE_COMMAND} -DEXPECT_RC=0)
  set(uses "ANYDEV_CUDA_LIBRARY=${emulator}")

  if(TARGET anydev-conformance-tests)
    # "name|extra environment", variables separated by '@'
    set(runs
      "conformance-cuda-emulator|"
      "conformance-cuda-emulator-delay|ANYDEV_CUDA_EMULATOR_DELAY_US=200"
      "conformance-cuda-emulator-no-pools|ANYDEV_CUDA_EMULATOR_MEMORY_POOLS=0"
      "conformance-cuda-emulator-no-pools-delay|ANYDEV_CUDA_EMULATOR_MEMORY_POOLS=0@ANYDEV_CUDA_EMULATOR_DELAY_US=200"
      "conformance-cuda-emulator-2-devices|ANYDEV_CUDA_EMULATOR_DEVICES=2"
      # A driver that wants a stream's own context current for calls on it.
      "conformance-cuda-emulator-stream-context|ANYDEV_CUDA_EMULATOR_DEVICES=2@ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT=2"
      # A driver that refuses anydev's fill kernel: wide fills run the plan.
      "conformance-cuda-emulator-no-modules|ANYDEV_CUDA_EMULATOR_NO_MODULES=1")
    foreach(entry IN LISTS runs)
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 name)
      list(LENGTH parts n)
      set(extra "")
      if(n GREATER 1)
        list(GET parts 1 extra)
        string(REPLACE "@" ";" extra "${extra}")
      endif()
      add_test(NAME ${name}
               COMMAND ${run} -DCOMMAND=$<TARGET_FILE:anydev-conformance-tests>
                       "-DMUST_MATCH=\\[  PASSED  \\] [1-9]@@OK \\] Conformance/[A-Za-z]+[.][A-Za-z]+/cuda_0"
                       -P ${check_script})
      set(environment ${uses} ANYDEV_CONFORMANCE_BACKENDS=cuda ${extra})
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "${environment}"
        # Every misuse the emulator sees is printed with this prefix.
        FAIL_REGULAR_EXPRESSION "anydev-cuda-emulator:"
        TIMEOUT 900)
    endforeach()
  else()
    message(STATUS "anydev: no target anydev-conformance-tests: "
                   "the conformance suite is not run against the CUDA emulator")
  endif()

  # scripts/hardware-check's own run, against the emulator: the two files in
  # $OUT, the step limits within 300 s, the library check in the summary.
  if(TARGET anydev-info AND TARGET anydev-conformance-tests AND TARGET anydev-backend-cuda
     AND TARGET anydev-share-tests)
    add_test(NAME hardware-check-rehearsal-emulator
             COMMAND ${run} -DCOMMAND=bash
                     "-DARGS=${ANYDEV_CUDA_EMULATOR_SOURCE_DIR}/hardware_check_rehearsal.sh@@${ANYDEV_CUDA_EMULATOR_BINARY_DIR}/hardware-check@@${PROJECT_SOURCE_DIR}/scripts/hardware-check@@$<TARGET_FILE:anydev-info>@@$<TARGET_FILE:anydev-conformance-tests>@@$<TARGET_FILE:anydev-backend-cuda>@@$<TARGET_FILE:anydev>@@$<TARGET_SONAME_FILE_NAME:anydev>@@$<TARGET_FILE:anydev-share-tests>"
                     "-DMUST_MATCH=files in OUT: logs.tar.gz summary.md\n@@worst case ([0-9]|[1-9][0-9]|[12][0-9][0-9]|300)s@@[|] glibc [|] system [0-9.]+. the binaries need GLIBC_[0-9.]+ [|]@@[|] libstdc[+][+] [|] system @@[|] ldd [|] loads [|]@@[|] anydev-info: cuda [|] available [|]@@[|] conformance, cuda, memory pools on [|] pass [|]@@[|] conformance, cuda, memory pools off [|] pass [|]@@[|] sharing between processes, cuda [|] pass [|]@@[|] graphs [(]GraphTest[)] [|] pass [|]@@[|] timing and stream priorities [(]TimingTest[)] [|] pass [|]@@[|] registered memory [(]RegisteredMemoryTest[)] [|] pass [|]@@archived: ./conformance-cuda-pools.log@@archived: ./libraries.txt"
                     -P ${check_script})
    set_tests_properties(hardware-check-rehearsal-emulator PROPERTIES
      ENVIRONMENT "${uses}" TIMEOUT 300)
  endif()

  if(TARGET anydev-info)
    set(info $<TARGET_FILE:anydev-info>)
    add_test(NAME cuda-emulator-available
             COMMAND ${run} -DCOMMAND=${info} "-DMUST_MATCH=anydev CUDA emulator" -P ${check_script})
    set_tests_properties(cuda-emulator-available PROPERTIES ENVIRONMENT "${uses}")

    add_test(NAME cuda-unavailable-without-driver
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=cannot open the CUDA driver library@@no-such-folder/libcuda.so.1"
                     -P ${check_script})
    set_tests_properties(cuda-unavailable-without-driver PROPERTIES
      ENVIRONMENT "ANYDEV_CUDA_LIBRARY=${ANYDEV_CUDA_EMULATOR_BINARY_DIR}/no-such-folder/libcuda.so.1")

    add_test(NAME cuda-unavailable-missing-symbol
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=lacks the required entry point cuMemcpyAsync" -P ${check_script})
    set_tests_properties(cuda-unavailable-missing-symbol PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_CUDA_EMULATOR_HIDE_SYMBOLS=cuMemcpyAsync")

    # cuGetProcAddress may return CUDA_SUCCESS with a null pointer: a required
    # entry point is then missing, an optional one turns its feature off.
    add_test(NAME cuda-unavailable-null-required-symbol
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=lacks the required entry point cuMemcpyAsync.*CUDA_SUCCESS with a null pointer"
                     -P ${check_script})
    set_tests_properties(cuda-unavailable-null-required-symbol PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS=cuMemcpyAsync")
    add_test(NAME cuda-null-optional-symbol-turns-pools-off
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=cuda +available@@device memory: cuMemAlloc, freed by the core.s stream-ordered release"
                     -P ${check_script})
    set_tests_properties(cuda-null-optional-symbol-turns-pools-off PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_CUDA_EMULATOR_NULL_SYMBOLS=cuMemAllocFromPoolAsync")

    add_test(NAME cuda-unavailable-no-device
             COMMAND ${run} -DCOMMAND=${info} "-DMUST_MATCH=cuInit failed: CUDA_ERROR_NO_DEVICE"
                     -P ${check_script})
    set_tests_properties(cuda-unavailable-no-device PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_CUDA_EMULATOR_DEVICES=0")
  endif()

  # Buffers and events shared between two real processes (tests/sharing),
  # two devices so that a handle of the other device is refused, each
  # operation delayed so that a missing order shows in the ring. Then a
  # device without VMM: device memory is refused with the attribute's name,
  # and, the driver lacking cuMemCreate, with the symbol's.
  if(TARGET anydev-share-tests)
    anydev_add_sharing_tests(cuda ${uses} ANYDEV_CUDA_EMULATOR_DEVICES=2
                             ANYDEV_CUDA_EMULATOR_DELAY_US=100 ANYDEV_SHARE_RING_ROUNDS=10000)
    set_tests_properties(sharing.cuda PROPERTIES TIMEOUT 400
      FAIL_REGULAR_EXPRESSION "\\[  FAILED  \\]|anydev-cuda-emulator:")
    # Again with a driver that wants each event's own context current for
    # calls on it (cuIpcGetEventHandle included) and without memory pools.
    add_test(NAME sharing.cuda.strict_context COMMAND anydev-share-tests)
    set_tests_properties(sharing.cuda.strict_context PROPERTIES
      ENVIRONMENT "ANYDEV_SHARE_BACKEND=cuda;${uses};ANYDEV_CUDA_EMULATOR_DEVICES=2;ANYDEV_CUDA_EMULATOR_STREAM_CONTEXT=2;ANYDEV_CUDA_EMULATOR_MEMORY_POOLS=0;ANYDEV_SHARE_RING_ROUNDS=200"
      FAIL_REGULAR_EXPRESSION "\\[  FAILED  \\]|anydev-cuda-emulator:"
      TIMEOUT 120)
    foreach(run "vmm_off|ANYDEV_CUDA_EMULATOR_VMM=0|cuda device 0 reports CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0"
                "no_cumemcreate|ANYDEV_CUDA_EMULATOR_HIDE_SYMBOLS=cuMemCreate|lacks cuMemCreate")
      string(REPLACE "|" ";" parts "${run}")
      list(GET parts 0 name)
      list(GET parts 1 setting)
      list(GET parts 2 reason)
      add_test(NAME sharing.cuda.${name} COMMAND anydev-share-tests
               --gtest_filter=Sharing.DeviceMemoryTheDeviceCannotExportSaysWhy)
      set_tests_properties(sharing.cuda.${name} PROPERTIES
        ENVIRONMENT "ANYDEV_SHARE_BACKEND=cuda;${uses};${setting};ANYDEV_SHARE_EXPECT_UNSUPPORTED=${reason}"
        PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] 1 test"
        FAIL_REGULAR_EXPRESSION "\\[  FAILED  \\]|\\[  SKIPPED \\]|anydev-cuda-emulator:"
        TIMEOUT 60)
    endforeach()
  endif()

  # The C API suite on cuda (the summary names the backend it ran on).
  if(TARGET anydev-c-api-tests)
    add_test(NAME c_api-cuda-emulator COMMAND anydev-c-api-tests)
    set_tests_properties(c_api-cuda-emulator PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_C_API_BACKEND=cuda"
      PASS_REGULAR_EXPRESSION "backend cuda: [1-9][0-9]* passed, 0 failed"
      FAIL_REGULAR_EXPRESSION "anydev-cuda-emulator:" TIMEOUT 120)
  endif()

  # The Python suite's backend-generic files (tests/python) on cuda.
  if(COMMAND anydev_python_add_backend_test)
    anydev_python_add_backend_test(python.cuda_emulator cuda "${uses}" "anydev-cuda-emulator:")
  endif()

  # The backend-parameterized DLPack tests on cuda: export of device and
  # pinned buffers (kDLCUDA, kDLCUDAHost), unversioned and 1.x, import back,
  # and imported host memory's one rule (tests/dlpack, EveryBackend/*).
  if(TARGET anydev-dlpack-tests)
    add_test(NAME dlpack.every_backend_cuda_emulator
             COMMAND anydev-dlpack-tests --gtest_filter=EveryBackend/*/cuda)
    set_tests_properties(dlpack.every_backend_cuda_emulator PROPERTIES
      ENVIRONMENT "${uses}" PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] [1-9]"
      FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]|\\[  FAILED  \\]|anydev-cuda-emulator:" TIMEOUT 60)
  endif()
endfunction()

# A deferred call's arguments are evaluated when it runs, in the top-level
# folder: pass this folder's paths through the cache.
set(ANYDEV_CUDA_EMULATOR_CHECK_SCRIPT "${CMAKE_CURRENT_SOURCE_DIR}/check_run.cmake" CACHE INTERNAL "")
set(ANYDEV_CUDA_EMULATOR_BINARY_DIR "${CMAKE_CURRENT_BINARY_DIR}" CACHE INTERNAL "")
set(ANYDEV_CUDA_EMULATOR_SOURCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}" CACHE INTERNAL "")
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL anydev_cuda_emulator_add_tests
               "$<TARGET_FILE:anydev-cuda-emulator>" "${ANYDEV_CUDA_EMULATOR_CHECK_SCRIPT}")

# check_run.cmake's retry after LeakSanitizer's tracer crash: taken once,
# and never for a leak report.
add_test(NAME check-run-retries-only-a-tracer-crash
         COMMAND ${CMAKE_COMMAND} -DCHECK_RUN=${CMAKE_CURRENT_SOURCE_DIR}/check_run.cmake
                 -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_run_selftest.cmake)
set_tests_properties(check-run-retries-only-a-tracer-crash PROPERTIES
  PASS_REGULAR_EXPRESSION "check_run self-test: passed" TIMEOUT 60)

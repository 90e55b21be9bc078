# SPDX-License-Identifier: Apache-2.0
# ctest entries for the emulated Level Zero driver and the level_zero backend,
# always through Debian's real loader (libze_loader.so.1) with the emulated
# driver named in ZE_ENABLE_ALT_DRIVERS, and (except where a test says) with
# the loader's validation layer on.
#
# The runs need targets defined elsewhere (anydev-conformance-tests, anydev-info,
# ...), possibly after this folder is read: they are added when the top-level
# folder is done.
find_library(ANYDEV_LEVEL_ZERO_LOADER NAMES ze_loader libze_loader.so.1
             DOC "Debian's Level Zero loader, for the level_zero tests")
if(NOT ANYDEV_LEVEL_ZERO_LOADER)
  message(STATUS "anydev: Level Zero tests skipped: no libze_loader (install libze1 and libze-dev)")
  return()
endif()

set(ANYDEV_LEVEL_ZERO_DRIVER_ENV "ZE_ENABLE_ALT_DRIVERS=$<TARGET_FILE:anydev-level-zero-emulator>"
    CACHE INTERNAL "")
# Every validation the 1.8 layer has: parameters, handle lifetimes, threading
# (not implemented in 1.8: accepted and ignored) and the memory tracker.
set(ANYDEV_LEVEL_ZERO_VALIDATION_ENV
    ZE_ENABLE_VALIDATION_LAYER=1 ZE_ENABLE_PARAMETER_VALIDATION=1 ZE_ENABLE_HANDLE_LIFETIME=1
    ZE_ENABLE_THREADING_VALIDATION=1 ZE_ENABLE_MEMORY_TRACKER=1 CACHE INTERNAL "")
# The emulator's misuse; the backend's error line for a call the validation
# layer (which prints nothing) rejected as malformed (lz_errors.cpp).
set(ANYDEV_LEVEL_ZERO_FAIL_RE
    "anydev-level-zero-emulator:|rejects as malformed|\\[  SKIPPED \\]" CACHE INTERNAL "")

find_package(GTest QUIET)
if(GTest_FOUND)
  add_executable(anydev-level-zero-emulator-tests emulator_test.cpp)
  target_include_directories(anydev-level-zero-emulator-tests PRIVATE
    "${ANYDEV_LEVEL_ZERO_INCLUDE_DIR}")
  target_link_libraries(anydev-level-zero-emulator-tests PRIVATE
    ${ANYDEV_LEVEL_ZERO_LOADER} GTest::gtest GTest::gtest_main anydev_warnings ${CMAKE_DL_LIBS})
  add_dependencies(anydev-level-zero-emulator-tests anydev-level-zero-emulator)
  # The selftest commits misuse on purpose and checks each report (its count,
  # or the line on stderr): no FAIL_REGULAR_EXPRESSION on the prefix here.
  foreach(variant IN ITEMS plain validation small-fill in-order ipc)
    set(environment ${ANYDEV_LEVEL_ZERO_DRIVER_ENV})
    set(filter "*")
    if(variant STREQUAL "validation")
      list(APPEND environment ${ANYDEV_LEVEL_ZERO_VALIDATION_ENV})
    else()
      set(filter "-*ValidationLayer*")
      if(variant STREQUAL "small-fill")
        list(APPEND environment ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN=4)
      elseif(variant STREQUAL "in-order")
        list(APPEND environment ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR=7)
      elseif(variant STREQUAL "ipc")
        list(APPEND environment ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1)
      endif()
    endif()
    add_test(NAME level_zero-emulator-selftest-${variant}
             COMMAND anydev-level-zero-emulator-tests --gtest_filter=${filter})
    set_tests_properties(level_zero-emulator-selftest-${variant} PROPERTIES
      ENVIRONMENT "${environment}" FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]" TIMEOUT 60)
  endforeach()

endif()

function(anydev_level_zero_emulator_add_tests check_script)
  set(run ${CMAKE_COMMAND} -DEXPECT_RC=0)
  set(uses ${ANYDEV_LEVEL_ZERO_DRIVER_ENV} ${ANYDEV_LEVEL_ZERO_VALIDATION_ENV})

  if(TARGET anydev-conformance-tests)
    # "name|extra environment", variables separated by '@'
    set(runs
      "conformance-level_zero-emulator|"
      "conformance-level_zero-emulator-delay|ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US=200"
      # A queue group that fills at most 4 bytes: 8- and 16-byte patterns by copies.
      "conformance-level_zero-emulator-small-fill|ANYDEV_LEVEL_ZERO_EMULATOR_MAX_FILL_PATTERN=4@ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US=100"
      "conformance-level_zero-emulator-2-devices|ANYDEV_LEVEL_ZERO_EMULATOR_DEVICES=2"
      # A log callback that re-enters the API for every message (tests/support).
      "conformance-level_zero-emulator-reentrant-log|ANYDEV_TEST_REENTRANT_LOG=1"
      # A driver of API 1.7: in-order lists, no barriers (the 1.8 validation
      # layer, which refuses the flag, off).
      "conformance-level_zero-emulator-in-order|ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR=7@ZE_ENABLE_VALIDATION_LAYER=0@ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US=100")
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
                       "-DMUST_MATCH=\\[  PASSED  \\] [1-9]@@OK \\] Conformance/[A-Za-z]+[.][A-Za-z]+/level_zero_0"
                       -P ${check_script})
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "${uses};ANYDEV_CONFORMANCE_BACKENDS=level_zero;${extra}"
        FAIL_REGULAR_EXPRESSION "anydev-level-zero-emulator:|rejects as malformed"
        TIMEOUT 900)
    endforeach()
  endif()

  if(TARGET anydev-c-api-tests)
    add_test(NAME c_api-level_zero-emulator COMMAND anydev-c-api-tests)
    set_tests_properties(c_api-level_zero-emulator PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_C_API_BACKEND=level_zero"
      PASS_REGULAR_EXPRESSION "backend level_zero: [1-9][0-9]* passed, 0 failed"
      FAIL_REGULAR_EXPRESSION "anydev-level-zero-emulator:|rejects as malformed" TIMEOUT 120)
  endif()

  # The backend-parameterized DLPack tests on level_zero: export of device
  # (kDLOneAPI) and host buffers, unversioned and 1.x, import back, and
  # imported host memory's one rule (tests/dlpack, EveryBackend/*).
  if(TARGET anydev-dlpack-tests)
    add_test(NAME dlpack.every_backend_level_zero_emulator
             COMMAND anydev-dlpack-tests --gtest_filter=EveryBackend/*/level_zero)
    set_tests_properties(dlpack.every_backend_level_zero_emulator PROPERTIES
      ENVIRONMENT "${uses}" PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] [1-9]"
      FAIL_REGULAR_EXPRESSION "${ANYDEV_LEVEL_ZERO_FAIL_RE}|\\[  FAILED  \\]" TIMEOUT 60)
  endif()

  # The Python suite's backend-generic files (tests/python) on level_zero,
  # through the real loader and its validation layer.
  if(COMMAND anydev_python_add_backend_test)
    anydev_python_add_backend_test(python.level_zero_emulator level_zero "${uses}"
      "anydev-level-zero-emulator:|rejects as malformed")
  endif()

  if(TARGET anydev-info)
    set(info $<TARGET_FILE:anydev-info>)
    add_test(NAME level_zero-emulator-available
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=level_zero +available@@anydev Level Zero emulator" -P ${check_script})
    set_tests_properties(level_zero-emulator-available PROPERTIES ENVIRONMENT "${uses}")

    # The real loader with no driver at all (this project's machines: libze1
    # only): the real cause, the result code and what to install. Not
    # registered where a real driver is installed (Intel's libze_intel_gpu).
    find_library(ANYDEV_LEVEL_ZERO_REAL_DRIVER NAMES ze_intel_gpu libze_intel_gpu.so.1)
    if(ANYDEV_LEVEL_ZERO_REAL_DRIVER)
      message(STATUS "anydev: level_zero-real-loader-no-driver not registered: a Level Zero "
                     "driver is installed (${ANYDEV_LEVEL_ZERO_REAL_DRIVER})")
    else()
      add_test(NAME level_zero-real-loader-no-driver
               COMMAND ${run} -DCOMMAND=${info}
                       "-DMUST_MATCH=level_zero +the Level Zero loader found no driver: zeInit[(]ZE_INIT_FLAG_GPU_ONLY[)] returned ZE_RESULT_ERROR_UNINITIALIZED [(]0x78000001[)].*install a Level Zero driver"
                       -P ${check_script})
      set_tests_properties(level_zero-real-loader-no-driver PROPERTIES
        ENVIRONMENT_MODIFICATION "ZE_ENABLE_ALT_DRIVERS=unset:;ANYDEV_LEVEL_ZERO_LIBRARY=unset:")
    endif()

    add_test(NAME level_zero-unavailable-without-loader
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=cannot open the Level Zero loader@@no-such-folder/libze_loader.so.1"
                     -P ${check_script})
    set_tests_properties(level_zero-unavailable-without-loader PROPERTIES
      ENVIRONMENT "ANYDEV_LEVEL_ZERO_LIBRARY=${CMAKE_CURRENT_BINARY_DIR}/no-such-folder/libze_loader.so.1")

    # Set but empty is refused like every malformed variable.
    add_test(NAME level_zero-library-set-but-empty
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=ANYDEV_LEVEL_ZERO_LIBRARY is set but empty" -P ${check_script})
    set_tests_properties(level_zero-library-set-but-empty PROPERTIES
      ENVIRONMENT "ANYDEV_LEVEL_ZERO_LIBRARY=")

    # A driver with no device does not initialize: the loader drops it.
    add_test(NAME level_zero-unavailable-no-device
             COMMAND ${run} -DCOMMAND=${info}
                     "-DMUST_MATCH=level_zero +the Level Zero loader found no driver" -P ${check_script})
    set_tests_properties(level_zero-unavailable-no-device PROPERTIES
      ENVIRONMENT "${uses};ANYDEV_LEVEL_ZERO_EMULATOR_DEVICES=0")
  endif()
endfunction()

set(ANYDEV_LEVEL_ZERO_EMULATOR_SOURCE_DIR "${CMAKE_CURRENT_SOURCE_DIR}" CACHE INTERNAL "")
# The CUDA emulator's run-and-match script, shared (it is not CUDA-specific).
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL anydev_level_zero_emulator_add_tests
               "${PROJECT_SOURCE_DIR}/tests/emulators/cuda/check_run.cmake")

# Buffers and events shared between two real processes (tests/sharing) on
# the emulated driver with IPC (ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1: memfd
# device memory, interprocess event pools in shared memory, the host-pointer
# import), through the real loader, two devices so that a handle of the other
# device is refused, each operation delayed so that a missing order shows in
# the ring: sharing.level_zero (plain), .validation (the 1.8 validation layer
# with the memory tracker) and .in_order (API 1.7, in-order lists). The tests
# that skip are left out (GTEST_FILTER), since a skip fails these runs.
# sharing.level_zero.no_host_import: a driver without the import (no IPC,
# no host import)
# refuses host memory naming it. Without IPC,
# SharingWithoutDriverIpcIsUnsupportedNamingTheReason in level_zero-backend-*
# checks the not_supported answers.
if(TARGET anydev-share-tests)
  set(_lz_share_env ${ANYDEV_LEVEL_ZERO_DRIVER_ENV} ANYDEV_LEVEL_ZERO_EMULATOR_IPC=1
      ANYDEV_LEVEL_ZERO_EMULATOR_DEVICES=2 ANYDEV_LEVEL_ZERO_EMULATOR_DELAY_US=100
      ANYDEV_SHARE_RING_ROUNDS=1000
      "GTEST_FILTER=-Sharing.DeviceMemoryTheDeviceCannotExportSaysWhy:Sharing.HostMemoryTheBackendCannotShareSaysWhy:SharingOnOpencl.*")
  # The main entry runs the issue's whole ring of 10^4 hand-overs; the
  # variants keep 10^3 to bound CI's time.
  set(_lz_ring_env ${_lz_share_env})
  list(REMOVE_ITEM _lz_ring_env ANYDEV_SHARE_RING_ROUNDS=1000)
  anydev_add_sharing_tests(level_zero ${_lz_ring_env} ANYDEV_SHARE_RING_ROUNDS=10000)
  set_tests_properties(sharing.level_zero PROPERTIES TIMEOUT 400
    PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] 24 tests"
    FAIL_REGULAR_EXPRESSION "${ANYDEV_LEVEL_ZERO_FAIL_RE}|\\[  FAILED  \\]")
  # anydev_add_sharing_tests names one entry per backend: the variants are
  # registered the same way under their own names.
  foreach(variant IN ITEMS validation in_order no_host_import)
    set(_env ANYDEV_SHARE_BACKEND=level_zero ${_lz_share_env})
    set(_pass "\\[  PASSED  \\] 24 tests")
    if(variant STREQUAL "validation")
      list(APPEND _env ${ANYDEV_LEVEL_ZERO_VALIDATION_ENV})
    elseif(variant STREQUAL "in_order")
      list(APPEND _env ANYDEV_LEVEL_ZERO_EMULATOR_API_MINOR=7)
    else()
      set(_env ANYDEV_SHARE_BACKEND=level_zero ${ANYDEV_LEVEL_ZERO_DRIVER_ENV}
          ANYDEV_LEVEL_ZERO_EMULATOR_HOST_IMPORT=0
          "ANYDEV_SHARE_EXPECT_HOST_UNSUPPORTED=the driver of level_zero device 0 does not offer it (zeDriverGetExtensionFunctionAddress: ZE_RESULT_ERROR_INVALID_ARGUMENT"
          GTEST_FILTER=Sharing.HostMemoryTheBackendCannotShareSaysWhy)
      set(_pass "\\[  PASSED  \\] 1 test")
    endif()
    add_test(NAME sharing.level_zero.${variant} COMMAND anydev-share-tests)
    set_tests_properties(sharing.level_zero.${variant} PROPERTIES
      ENVIRONMENT "${_env}" TIMEOUT 120 PASS_REGULAR_EXPRESSION "${_pass}"
      FAIL_REGULAR_EXPRESSION "${ANYDEV_LEVEL_ZERO_FAIL_RE}|\\[  FAILED  \\]")
  endforeach()
endif()

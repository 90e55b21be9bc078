# SPDX-License-Identifier: Apache-2.0
# ctest entries for the hip backend run against the HIP emulator (included by
# this folder's CMakeLists.txt once the emulator targets exist). Every run
# sets ANYDEV_HIP_LIBRARY to an emulator variant: libamdhip64.so.5 (HIP 5.2:
# no hipMemsetD2D32Async, so 8- and 16-byte fills are replicated) or
# rocm7/libamdhip64.so.7 (with it: strided fills). Every misuse the emulator
# sees is printed with the prefix "anydev-hip-emulator:", which fails the
# test. The ASan/UBSan stage of .ci/run runs them all in build-asan/.
#
# The conformance and DLPack runs need targets defined elsewhere (tests/
# conformance, tests/dlpack), possibly after this folder is read: they are
# added when the top-level folder is done.
if(NOT TARGET anydev-backend-hip OR NOT TARGET anydev-hip-emulator)
  return()
endif()

set(ANYDEV_HIP_EMULATOR_5 "$<TARGET_FILE:anydev-hip-emulator>")
set(ANYDEV_HIP_EMULATOR_7 "$<TARGET_FILE:anydev-hip-emulator-rocm7>")

find_package(GTest QUIET)
if(GTest_FOUND)
  add_executable(anydev-hip-backend-tests hip_backend_test.cpp
                                          ${PROJECT_SOURCE_DIR}/backends/gpu/gpu_fill_plan.cpp)
  target_include_directories(anydev-hip-backend-tests PRIVATE
    "${ANYDEV_HIP_EMULATOR_INCLUDE_DIR}" ${PROJECT_SOURCE_DIR}/backends/gpu)
  target_compile_definitions(anydev-hip-backend-tests PRIVATE __HIP_PLATFORM_AMD__
    ANYDEV_TEST_HIP_PLUGIN="$<TARGET_FILE:anydev-backend-hip>")
  # The GPU core's rules hold for cuda too: one case runs on the cuda plugin
  # and the CUDA emulator when both are built.
  if(TARGET anydev-backend-cuda AND TARGET anydev-cuda-emulator)
    target_compile_definitions(anydev-hip-backend-tests PRIVATE
      ANYDEV_TEST_CUDA_PLUGIN="$<TARGET_FILE:anydev-backend-cuda>")
    add_dependencies(anydev-hip-backend-tests anydev-backend-cuda anydev-cuda-emulator)
    set(cuda_environment "ANYDEV_CUDA_LIBRARY=$<TARGET_FILE:anydev-cuda-emulator>")
  else()
    set(cuda_environment "")
  endif()
  target_link_libraries(anydev-hip-backend-tests PRIVATE
    anydev::anydev GTest::gtest GTest::gtest_main anydev_warnings Threads::Threads
    ${CMAKE_DL_LIBS})
  add_dependencies(anydev-hip-backend-tests anydev-backend-hip anydev-hip-emulator
                   anydev-hip-emulator-rocm7)
  # "name|library|extra environment" (variables separated by '@')
  foreach(entry IN ITEMS
      "hip-backend-5|${ANYDEV_HIP_EMULATOR_5}|"
      "hip-backend-rocm7|${ANYDEV_HIP_EMULATOR_7}|"
      "hip-backend-5-no-pools-delay|${ANYDEV_HIP_EMULATOR_5}|ANYDEV_HIP_EMULATOR_MEMORY_POOLS=0@ANYDEV_HIP_EMULATOR_DELAY_US=300")
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 library)
    list(GET parts 2 extra)
    string(REPLACE "@" ";" extra "${extra}")
    add_test(NAME ${name} COMMAND anydev-hip-backend-tests)
    set_tests_properties(${name} PROPERTIES
      ENVIRONMENT "ANYDEV_HIP_LIBRARY=${library};ANYDEV_HIP_EMULATOR_DEVICES=2;ANYDEV_BACKEND=cpu;${cuda_environment};${extra}"
      FAIL_REGULAR_EXPRESSION "anydev-hip-emulator:|\\[  SKIPPED \\]" TIMEOUT 300)
  endforeach()
endif()

function(anydev_hip_backend_add_tests emulator5 emulator7)
  if(TARGET anydev-conformance-tests)
    # "name|library|extra environment", variables separated by '@'. The
    # conformance suite must run tests on hip (an "OK ] .../hip_0" line) and
    # fail none.
    foreach(entry IN ITEMS
        "conformance-hip-emulator|${emulator5}|"
        "conformance-hip-emulator-rocm7|${emulator7}|"
        "conformance-hip-emulator-delay|${emulator5}|ANYDEV_HIP_EMULATOR_DELAY_US=200"
        "conformance-hip-emulator-no-pools|${emulator5}|ANYDEV_HIP_EMULATOR_MEMORY_POOLS=0"
        "conformance-hip-emulator-2-devices|${emulator5}|ANYDEV_HIP_EMULATOR_DEVICES=2")
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 name)
      list(GET parts 1 library)
      list(GET parts 2 extra)
      string(REPLACE "@" ";" extra "${extra}")
      add_test(NAME ${name} COMMAND anydev-conformance-tests)
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "ANYDEV_HIP_LIBRARY=${library};ANYDEV_CONFORMANCE_BACKENDS=hip;${extra}"
        PASS_REGULAR_EXPRESSION "OK \\] Conformance/[A-Za-z]+[.][A-Za-z]+/hip_0"
        FAIL_REGULAR_EXPRESSION "anydev-hip-emulator:|\\[  FAILED  \\]"
        TIMEOUT 900)
    endforeach()
  endif()

  # The C API suite on hip, on each emulator variant (the summary names the
  # backend it ran on).
  if(TARGET anydev-c-api-tests)
    foreach(entry IN ITEMS "c_api-hip-emulator|${emulator5}" "c_api-hip-emulator-rocm7|${emulator7}")
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 name)
      list(GET parts 1 library)
      add_test(NAME ${name} COMMAND anydev-c-api-tests)
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "ANYDEV_HIP_LIBRARY=${library};ANYDEV_C_API_BACKEND=hip"
        PASS_REGULAR_EXPRESSION "backend hip: [1-9][0-9]* passed, 0 failed"
        FAIL_REGULAR_EXPRESSION "anydev-hip-emulator:" TIMEOUT 120)
    endforeach()
  endif()

  # Imports found by the backends' DLPack capabilities (kDLROCM: hip).
  if(TARGET anydev-dlpack-tests)
    add_test(NAME dlpack.import_hip_emulator
             COMMAND anydev-dlpack-tests --gtest_filter=DlpackImport.Rocm*)
    set_tests_properties(dlpack.import_hip_emulator PROPERTIES
      ENVIRONMENT "ANYDEV_BACKEND=cpu;ANYDEV_HIP_LIBRARY=${emulator5}"
      FAIL_REGULAR_EXPRESSION "anydev-hip-emulator:|\\[  SKIPPED \\]" TIMEOUT 60)
  endif()

  # The backend-parameterized DLPack tests on hip, on each emulator variant:
  # export of device and pinned buffers (kDLROCM, kDLROCMHost), unversioned
  # and 1.x, import back, and imported host memory's one rule
  # (tests/dlpack, EveryBackend/*).
  if(TARGET anydev-dlpack-tests)
    foreach(entry IN ITEMS "dlpack.every_backend_hip_emulator|${emulator5}"
                           "dlpack.every_backend_hip_emulator-rocm7|${emulator7}")
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 name)
      list(GET parts 1 library)
      add_test(NAME ${name} COMMAND anydev-dlpack-tests --gtest_filter=EveryBackend/*/hip)
      set_tests_properties(${name} PROPERTIES
        ENVIRONMENT "ANYDEV_HIP_LIBRARY=${library}" PASS_REGULAR_EXPRESSION "\\[  PASSED  \\] [1-9]"
        FAIL_REGULAR_EXPRESSION "anydev-hip-emulator:|\\[  SKIPPED \\]|\\[  FAILED  \\]" TIMEOUT 60)
    endforeach()
  endif()

  if(TARGET anydev-info)
    add_test(NAME hip-emulator-available COMMAND anydev-info)
    set_tests_properties(hip-emulator-available PROPERTIES
      ENVIRONMENT "ANYDEV_HIP_LIBRARY=${emulator5}"
      PASS_REGULAR_EXPRESSION "\n  hip +available +1 ")
    add_test(NAME hip-unavailable-no-device COMMAND anydev-info)
    set_tests_properties(hip-unavailable-no-device PROPERTIES
      ENVIRONMENT "ANYDEV_HIP_LIBRARY=${emulator5};ANYDEV_HIP_EMULATOR_DEVICES=0"
      PASS_REGULAR_EXPRESSION "hip +hipGetDeviceCount failed: hipErrorNoDevice")
  endif()
endfunction()
# A deferred call's arguments are evaluated when it runs, in the top-level
# folder, where this folder's variables are unset: the paths are spelled out.
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL anydev_hip_backend_add_tests
               "$<TARGET_FILE:anydev-hip-emulator>" "$<TARGET_FILE:anydev-hip-emulator-rocm7>")

# The Python suite's backend-generic files (tests/python) on hip, on each
# emulator variant, plain and, in the ASan build, with tests/python's
# preloads; not under TSan (tests/python registers nothing there).
if(COMMAND anydev_python_add_backend_test)
  anydev_python_add_backend_test(python.hip_emulator hip
    "ANYDEV_HIP_LIBRARY=$<TARGET_FILE:anydev-hip-emulator>" "anydev-hip-emulator:")
  anydev_python_add_backend_test(python.hip_emulator-rocm7 hip
    "ANYDEV_HIP_LIBRARY=$<TARGET_FILE:anydev-hip-emulator-rocm7>" "anydev-hip-emulator:")
endif()

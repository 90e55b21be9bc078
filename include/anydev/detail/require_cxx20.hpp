// SPDX-License-Identifier: Apache-2.0
// Stops a translation unit that includes anydev's C++ headers in C++17 or
// older with one clear message, instead of the errors the first C++20 feature
// would give ("'bit_cast' is not a member of 'std'"). No types, nothing to
// own: a preprocessor check.
//
// Every anydev *.hpp includes this file first, before its own include guard.
// Under C++17 this file then defines every one of those guards, so that the
// rest of each header is skipped and the #error below is the only error.
// tests/headers checks both for every header (a new header must be listed
// below).
#ifndef ANYDEV_DETAIL_REQUIRE_CXX20_HPP_
#define ANYDEV_DETAIL_REQUIRE_CXX20_HPP_

// MSVC reports the language in _MSVC_LANG (__cplusplus stays 199711L unless
// /Zc:__cplusplus); other compilers in __cplusplus. C++20 is > 201703L (GCC
// 10 and Clang 10 report 201709L/201707L for -std=c++2a).
#if defined(_MSVC_LANG) ? (_MSVC_LANG <= 201703L) : (__cplusplus <= 201703L)
// clang-format off
#error "anydev's C++ API (anydev/anydev.hpp) needs C++20: compile with -std=c++20 (CMake: CXX_STANDARD 20). From C++17 or older (e.g. a PyTorch extension's default), or from C, use the C ABI instead: #include <anydev/anydev.h>"
// clang-format on
#define ANYDEV_ANYDEV_HPP_
#define ANYDEV_ATTRIBUTES_HPP_
#define ANYDEV_BUFFER_HPP_
#define ANYDEV_COMM_HPP_
#define ANYDEV_CONTEXT_HPP_
#define ANYDEV_DETAIL_BUFFER_BASE_HPP_
#define ANYDEV_DETAIL_BUFFER_FWD_HPP_
#define ANYDEV_DETAIL_C_STRINGS_HPP_
#define ANYDEV_DETAIL_FORMAT_HPP_
#define ANYDEV_DETAIL_HANDLE_HPP_
#define ANYDEV_DETAIL_VALIDATION_HPP_
#define ANYDEV_DLPACK_HPP_
#define ANYDEV_DTYPE_HPP_
#define ANYDEV_FLOAT16_HPP_
#define ANYDEV_GRAPH_HPP_
#define ANYDEV_LOGGING_HPP_
#define ANYDEV_MEMORY_HPP_
#define ANYDEV_SHARE_HPP_
#define ANYDEV_STATUS_HPP_
#define ANYDEV_STREAM_HPP_
#endif

#endif  // ANYDEV_DETAIL_REQUIRE_CXX20_HPP_

// SPDX-License-Identifier: Apache-2.0
// anydev errors as Python exceptions: anydev.Error (with .status, the status
// name, and .code, its number) and one subclass per status, some of which
// also derive from the matching Python built-in (OutOfRangeError is an
// IndexError, InvalidArgumentError a ValueError, OutOfMemoryError a
// MemoryError) so that ordinary Python idioms work. The message is the C
// ABI's, unchanged. Registered once at import; used with the GIL held.
#ifndef ANYDEV_PYTHON_PY_ERRORS_H_
#define ANYDEV_PYTHON_PY_ERRORS_H_

#include <pybind11/pybind11.h>

#include <string_view>

#include "anydev/anydev.hpp"

namespace anydev::python {

// Creates the exception classes in `m` and registers the translator of
// anydev::Error.
void bind_errors(pybind11::module_& m);

// Text from the library (messages, names, paths) as a Python str: UTF-8,
// each byte that is not valid UTF-8 written \xHH, as the library writes
// control characters, so a Latin-1 path never raises UnicodeDecodeError.
pybind11::str library_text(std::string_view text);

// Throws anydev::Error for a failing C call (like detail::check).
inline void check(anydev_status_t status) { anydev::detail::check(status); }

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_PY_ERRORS_H_

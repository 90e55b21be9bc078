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

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anydev/anydev.hpp"

namespace anydev::python {

// Creates the exception classes in `m` and registers the translator of
// anydev::Error.
void bind_errors(pybind11::module_& m);

// Text from the library (messages, names, paths) as a Python str: UTF-8,
// each byte that is not valid UTF-8 written \xHH, as the library writes
// control characters, so a Latin-1 path never raises UnicodeDecodeError.
pybind11::str library_text(std::string_view text);

// Releases the GIL for a binding call that enters anydev, which may take its
// locks or block: a Python thread waiting there never holds up another one
// that anydev waits for (a log handler running under one of its locks).
// Messages logged on this thread meanwhile are kept and handed to the
// Python handler when the GIL is back (the destructor), before the call
// returns: in order with the caller's code, never under an anydev lock
// (py_logging.cpp). Construct with the GIL held; usable as
// py::call_guard<WithoutGil>.
class WithoutGil {
 public:
  struct Held {
    std::vector<std::pair<int, std::string>> records;
    std::size_t dropped = 0;
  };
  WithoutGil();
  ~WithoutGil();
  WithoutGil(const WithoutGil&) = delete;
  WithoutGil& operator=(const WithoutGil&) = delete;

 private:
  Held held_;
  Held* previous_;
  PyThreadState* state_;
};

// Throws anydev::Error for a failing C call (like detail::check).
inline void check(anydev_status_t status) { anydev::detail::check(status); }

}  // namespace anydev::python

#endif  // ANYDEV_PYTHON_PY_ERRORS_H_

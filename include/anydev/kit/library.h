// SPDX-License-Identifier: Apache-2.0
// Opening a vendor library (or a plugin) with dlopen, with one error format:
//
//   cannot open the <what> "<file>": <dlerror() text> (<hint>)
//   the <what> "<file>" [(<opened file>)] lacks the required entry point <symbol>: <why>
//
// Stateless apart from dlerror()'s per-thread text, which every function here
// reads right after the call that set it: thread-safe. A handle returned by
// open_library is the caller's (backends keep vendor libraries open for the
// life of the process; the core closes a plugin it refuses).
#ifndef ANYDEV_KIT_LIBRARY_H_
#define ANYDEV_KIT_LIBRARY_H_

#include <dlfcn.h>

#include <string>

#include "anydev/kit/cat.h"

namespace anydev::kit {

// What the last dl* call of this thread said, or `none` when it said nothing.
inline std::string dl_error_text(const char* none = "no dlerror text") {
  const char* text = dlerror();
  return text != nullptr ? text : none;
}

// `hint` in parentheses after a message, or nothing when it is empty.
inline std::string with_hint(const std::string& hint) {
  return hint.empty() ? std::string() : cat(" (", hint, ")");
}

// The message for a library that dlopen refused.
inline std::string open_failure(const std::string& what, const std::string& file,
                                const std::string& dl_error, const std::string& hint) {
  return cat("cannot open the ", what, " \"", file, "\": ", dl_error, with_hint(hint));
}

// The message for a library that lacks a symbol the caller cannot do without.
// `opened`, when not empty, is the file the loader actually opened for `file`
// (a soname resolved to a path); it follows the file in parentheses.
inline std::string symbol_failure(const std::string& what, const std::string& file,
                                  const std::string& symbol, const std::string& why,
                                  const std::string& opened = "") {
  return cat("the ", what, " \"", file, "\"", opened.empty() ? "" : cat(" (", opened, ")"),
             " lacks the required entry point ", symbol, ": ", why);
}

// dlopen(path, RTLD_NOW | RTLD_LOCAL). On failure returns nullptr and sets
// *error to open_failure(what, path, dlerror(), hint).
inline void* open_library(const std::string& path, const std::string& what, const std::string& hint,
                          std::string* error) {
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) *error = open_failure(what, path, dl_error_text("dlopen failed"), hint);
  return library;
}

// The plain resolver of symbol tables (kit_symbols.h): dlsym on one library,
// the key being the symbol's name. Holds the handle, does not own it.
class dlsym_resolver {
 public:
  using key_type = const char*;

  explicit dlsym_resolver(void* library) : library_(library) {}

  void* operator()(const char* name, std::string* why) const {
    dlerror();
    void* symbol = dlsym(library_, name);
    if (symbol == nullptr) *why = dl_error_text("null symbol");
    return symbol;
  }

 private:
  void* library_;
};

}  // namespace anydev::kit

#endif  // ANYDEV_KIT_LIBRARY_H_

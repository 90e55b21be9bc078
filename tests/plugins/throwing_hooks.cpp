// SPDX-License-Identifier: Apache-2.0
// The hooks of fake_backend.c (TEST_PLUGIN_HOOKS) for plugins written in
// C++ that break the rule that entries never throw (backend.h):
//
//   TEST_PLUGIN_THROW_IN_ENTRY       the entry point throws std::runtime_error
//   TEST_PLUGIN_THROW_IN_INITIALIZE  initialize throws std::runtime_error
//   TEST_PLUGIN_THROW_NON_STD        what is thrown is an int instead
//
// The core must catch it, name it in the backend's reason and dlclose the
// plugin. Nothing here may keep the plugin loaded after dlclose (no inline
// function-local statics: they would be STB_GNU_UNIQUE symbols).
#include <stdexcept>
#include <string>

namespace {

[[noreturn]] void throw_now(const char* where) {
#ifdef TEST_PLUGIN_THROW_NON_STD
  (void)where;
  throw 42;
#else
  throw std::runtime_error(std::string(TEST_PLUGIN_NAME " exploded in ") + where);
#endif
}

}  // namespace

extern "C" void test_plugin_entry_hook(void) {
#ifdef TEST_PLUGIN_THROW_IN_ENTRY
  throw_now("its entry point");
#endif
}

extern "C" void test_plugin_initialize_hook(void) {
#ifdef TEST_PLUGIN_THROW_IN_INITIALIZE
  throw_now("initialize");
#endif
}

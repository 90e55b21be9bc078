/* SPDX-License-Identifier: Apache-2.0 */
/* A plugin that needs libanydev-test-dep.so, which is built into a folder no
 * search path names: dlopen fails with "cannot open shared object file" and
 * the loader must pass dlerror()'s text on. */
#include "anydev/backend.h"

int anydev_test_dep_value(void);

ANYDEV_BACKEND_EXPORT anydev_status_t anydev_backend_entry(uint32_t core_abi_version,
                                                           const anydev_core_services_t* core,
                                                           const anydev_backend_table_t** out) {
  (void)core_abi_version;
  (void)out;
  /* Never reached: the library cannot be loaded. */
  return anydev_test_dep_value() == 0
             ? ANYDEV_SUCCESS
             : core->set_error(ANYDEV_ERROR_BACKEND_UNAVAILABLE, "testmissingdep: unreachable");
}

/* SPDX-License-Identifier: Apache-2.0 */
/* A shared library named like a plugin that exports no anydev_backend_entry
 * (only a differently named function), so the loader must say which symbol
 * it missed. */
#include "anydev/backend.h"

ANYDEV_BACKEND_EXPORT int anydev_backend_entry_is_missing_here(void) { return 42; }

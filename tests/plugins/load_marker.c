/* SPDX-License-Identifier: Apache-2.0 */
/* Compiled into every test plugin: when the plugin is loaded (dlopen runs
 * its constructors), it creates the file
 *   $ANYDEV_TEST_PLUGIN_MARKER_DIR/<TEST_PLUGIN_NAME>.<pid>
 * so that a test can tell whether a process ever opened it. Does nothing when
 * the variable is unset. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef TEST_PLUGIN_NAME
#error "TEST_PLUGIN_NAME must be defined"
#endif

__attribute__((constructor)) static void anydev_test_plugin_mark_loaded(void) {
  const char* dir = getenv("ANYDEV_TEST_PLUGIN_MARKER_DIR");
  if (dir == NULL || dir[0] == '\0') return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%ld", dir, TEST_PLUGIN_NAME, (long)getpid());
  FILE* file = fopen(path, "w");
  if (file != NULL) {
    fputs("loaded\n", file);
    fclose(file);
  }
}

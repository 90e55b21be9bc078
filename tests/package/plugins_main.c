/* SPDX-License-Identifier: Apache-2.0 */
/* Where a consumer's libanydev looks for its backend plugins, checked against
 * the folder the build or install put them in (argv[1]): that folder must be
 * among anydev_plugin_path(), and every libanydev-backend-<name>.so in it must
 * be the library anydev reports for backend <name> (whether or not its vendor
 * driver is present). scripts/check-install runs it for the install tree, the
 * build tree and the add_subdirectory/FetchContent layouts. Exits non-zero
 * naming what differs. */
#define _DEFAULT_SOURCE /* realpath */
#include <anydev/anydev.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char plugin_prefix[] = "libanydev-backend-";
static const char plugin_suffix[] = ".so";

/* `path` resolved into `out` (PATH_MAX bytes); a folder that does not exist
 * (no plugin was built) as given, without trailing slashes. */
static void resolve(const char* path, char* out) {
  if (realpath(path, out) != NULL) return;
  snprintf(out, PATH_MAX, "%s", path);
  for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; --n) out[n - 1] = '\0';
}

/* 1 when the ':'-separated list `path` holds the folder `wanted` (resolved). */
static int path_holds(const char* path, const char* wanted) {
  const char* start = path;
  for (;;) {
    const char* end = strchr(start, ':');
    size_t length = end != NULL ? (size_t)(end - start) : strlen(start);
    char entry[PATH_MAX];
    char resolved[PATH_MAX];
    if (length > 0 && length < sizeof(entry)) {
      memcpy(entry, start, length);
      entry[length] = '\0';
      resolve(entry, resolved);
      if (strcmp(resolved, wanted) == 0) return 1;
    }
    if (end == NULL) return 0;
    start = end + 1;
  }
}

/* 1 when `library` (anydev_backend_info_t::library: "<folder>/<file>" and
 * maybe " -> <vendor library>") names the file `file` in the folder `wanted`
 * (a realpath). */
static int library_is(const char* library, const char* wanted, const char* file) {
  const char* arrow = strstr(library, " -> ");
  size_t length = arrow != NULL ? (size_t)(arrow - library) : strlen(library);
  char plugin[PATH_MAX];
  char resolved[PATH_MAX];
  if (length == 0 || length >= sizeof(plugin)) return 0;
  memcpy(plugin, library, length);
  plugin[length] = '\0';
  char* slash = strrchr(plugin, '/');
  if (slash == NULL || strcmp(slash + 1, file) != 0) return 0;
  *slash = '\0';
  return realpath(plugin, resolved) != NULL && strcmp(resolved, wanted) == 0;
}

/* 0 when backend `name` reports the file `file` of the folder `wanted` (a
 * realpath) as its library, else 1 (with a message). */
static int check_backend(const char* name, const char* wanted, const char* file) {
  size_t count = 0;
  if (anydev_backend_count(&count) != ANYDEV_SUCCESS) {
    fprintf(stderr, "plugin_consumer: anydev_backend_count failed: %s\n",
            anydev_last_error_message());
    return 1;
  }
  for (size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info;
    memset(&info, 0, sizeof(info));
    info.struct_size = sizeof(info);
    if (anydev_backend_info(i, &info) != ANYDEV_SUCCESS || strcmp(info.name, name) != 0) continue;
    if (info.library != NULL && library_is(info.library, wanted, file)) {
      printf("plugin_consumer: %s from %s (%s)\n", name, info.library,
             info.available ? "available" : info.reason);
      return 0;
    }
    fprintf(stderr, "plugin_consumer: backend %s reports library '%s', not %s/%s (reason: %s)\n",
            name, info.library != NULL ? info.library : "(null)", wanted, file, info.reason);
    return 1;
  }
  fprintf(stderr, "plugin_consumer: the plugin %s is not listed as backend %s\n", file, name);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: plugin_consumer <plugin folder>\n");
    return 2;
  }
  const char* folder = argv[1];
  char wanted[PATH_MAX];
  resolve(folder, wanted);
  const char* path = anydev_plugin_path();
  if (path == NULL || !path_holds(path, wanted)) {
    fprintf(stderr, "plugin_consumer: the library does not search %s; it searches '%s'\n", wanted,
            path != NULL ? path : "(null)");
    return 1;
  }
  DIR* dir = opendir(wanted);
  if (dir == NULL) {
    /* Searched, but no plugin was built (say -DANYDEV_BACKEND_OPENCL=OFF). */
    printf("plugin_consumer: %s searched; no plugin there\n", wanted);
    return 0;
  }
  int failures = 0;
  int plugins = 0;
  for (struct dirent* entry = readdir(dir); entry != NULL; entry = readdir(dir)) {
    const char* file = entry->d_name;
    size_t length = strlen(file);
    size_t affixes = sizeof(plugin_prefix) - 1 + sizeof(plugin_suffix) - 1;
    if (length <= affixes || strncmp(file, plugin_prefix, sizeof(plugin_prefix) - 1) != 0 ||
        strcmp(file + length - (sizeof(plugin_suffix) - 1), plugin_suffix) != 0) {
      continue;
    }
    char name[NAME_MAX + 1];
    size_t name_length = length - affixes;
    memcpy(name, file + sizeof(plugin_prefix) - 1, name_length);
    name[name_length] = '\0';
    ++plugins;
    failures += check_backend(name, wanted, file);
  }
  closedir(dir);
  if (failures == 0)
    printf("plugin_consumer: %s searched, %d plugins there found\n", folder, plugins);
  return failures == 0 ? 0 : 1;
}

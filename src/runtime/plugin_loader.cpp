// SPDX-License-Identifier: Apache-2.0
#include "runtime/plugin_loader.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include "anydev/kit/library.h"
#include "anydev/kit/table.h"
#include "support/logging.h"
#include "support/status.h"

namespace anydev::core {
namespace {

std::string dl_error_text() { return kit::dl_error_text("(no dlerror text)"); }

// Who besides the owner may write a file of `mode`, or nullptr when nobody.
const char* writers(mode_t mode) {
  const bool group = (mode & S_IWGRP) != 0;
  const bool others = (mode & S_IWOTH) != 0;
  if (group && others) return "its group and others";
  if (group) return "its group";
  if (others) return "others";
  return nullptr;
}

// "<what> <path> is writable by ... (mode 0777)", or "" when it is not (or
// cannot be examined).
std::string writable_reason(const char* what, const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return {};
  const char* who = writers(info.st_mode);
  if (who == nullptr) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  return cat(what, " ", path, " is writable by ", who, " (mode ", mode, ")");
}

}  // namespace

std::string writable_plugin_reason(const std::string& path) {
  const std::filesystem::path named(path);
  const std::string folder =
      named.has_parent_path() ? named.parent_path().string() : std::string(".");
  std::string why = writable_reason("plugin", path);
  if (why.empty()) why = writable_reason("plugin folder", folder);
  // Through a symbolic link, the file that is really opened and its folder.
  const std::unique_ptr<char, decltype(&std::free)> real(realpath(path.c_str(), nullptr),
                                                         &std::free);
  if (why.empty() && real != nullptr && path != real.get()) {
    const std::string real_path = real.get();
    why = writable_reason("plugin", real_path);
    if (why.empty()) {
      why =
          writable_reason("plugin folder", std::filesystem::path(real_path).parent_path().string());
    }
  }
  if (why.empty()) return why;
  return cat(why, ": whoever may write there chooses the code this process runs, so ", path,
             " is not loaded (ANYDEV_PLUGIN_ALLOW_WRITABLE=1 loads it anyway)");
}

std::string plugin_file_name(std::string_view backend_name) {
  return cat("libanydev-backend-", backend_name, ".so");
}

std::string validate_backend_table(const anydev_backend_table_t* table,
                                   std::string_view expected_name) {
  if (table == nullptr) return "the entry point returned no table";
  if (table->abi_version != ANYDEV_BACKEND_ABI_VERSION) {
    return cat("backend ABI version ", table->abi_version, ", but this anydev expects version ",
               ANYDEV_BACKEND_ABI_VERSION);
  }
  if (table->struct_size < kSmallestBackendTableBytes) {
    return cat("backend table of ", table->struct_size, " bytes, but this anydev needs at least ",
               kSmallestBackendTableBytes, " (every required entry of ABI version ",
               ANYDEV_BACKEND_ABI_VERSION, ")");
  }
  if (table->name == nullptr || expected_name != table->name) {
    return cat("the table names backend \"", table->name ? table->name : "(null)",
               "\", expected \"", expected_name, "\"");
  }
  struct Required {
    const char* name;
    bool present;
  };
#define ANYDEV_REQUIRED_ENTRY(name) {#name, table->name != nullptr},
  const Required required[] = {ANYDEV_KIT_REQUIRED_ENTRIES(ANYDEV_REQUIRED_ENTRY)};
#undef ANYDEV_REQUIRED_ENTRY
  for (const Required& entry : required) {
    if (!entry.present) return cat("the required table entry ", entry.name, " is NULL");
  }
  return {};
}

PluginLoad load_plugin(const std::string& path, std::string_view expected_name,
                       const anydev_core_services_t* services) {
  PluginLoad result;
  void* library = kit::open_library(path, "backend plugin", "", &result.error);
  if (library == nullptr) return result;
  dlerror();
  void* symbol = dlsym(library, ANYDEV_BACKEND_ENTRY_SYMBOL);
  if (symbol == nullptr) {
    result.error =
        cat(path, ": no entry point ", ANYDEV_BACKEND_ENTRY_SYMBOL, " (", dl_error_text(), ")");
    dlclose(library);
    return result;
  }
  auto entry = reinterpret_cast<anydev_backend_entry_fn>(symbol);
  const anydev_backend_table_t* table = nullptr;
  clear_last_error();
  std::string thrown;
  const anydev_status_t status =
      call_catching([&] { return entry(ANYDEV_BACKEND_ABI_VERSION, services, &table); }, &thrown);
  if (!thrown.empty()) {
    result.error = cat(path, ": ", ANYDEV_BACKEND_ENTRY_SYMBOL, " ", thrown);
    dlclose(library);
    return result;
  }
  if (status != ANYDEV_SUCCESS) {
    const std::string& message = last_error_message();
    result.error =
        cat(path, ": ", ANYDEV_BACKEND_ENTRY_SYMBOL, " failed (status ", anydev_status_name(status),
            ")", message.empty() ? std::string() : ": " + message);
    dlclose(library);
    return result;
  }
  if (std::string why = validate_backend_table(table, expected_name); !why.empty()) {
    result.error = cat(path, ": ", why);
    dlclose(library);
    return result;
  }
  if (table->struct_size < sizeof(anydev_backend_table_t)) {
    // Built against an older header: the optional entries it lacks read as
    // NULL (declined).
    auto* full = new anydev_backend_table_t{};  // lives for the process
    std::memcpy(static_cast<void*>(full), table, table->struct_size);
    full->struct_size = sizeof(anydev_backend_table_t);
    log(ANYDEV_LOG_DEBUG,
        cat(path, ": backend table of ", table->struct_size, " bytes (built against an older ",
            "anydev); the optional entries past it are declined"));
    table = full;
  } else if (table->struct_size > sizeof(anydev_backend_table_t)) {
    // Built against a newer header: its entries past this core's table are
    // never read.
    log(ANYDEV_LOG_DEBUG,
        cat(path, ": backend table of ", table->struct_size, " bytes (built against a newer ",
            "anydev); the ", table->struct_size - sizeof(anydev_backend_table_t),
            " bytes of entries past this anydev's ", sizeof(anydev_backend_table_t),
            " are ignored"));
  }
  result.table = table;
  result.library = library;
  return result;
}

}  // namespace anydev::core

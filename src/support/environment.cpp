// SPDX-License-Identifier: Apache-2.0
#include "support/environment.h"

#include <array>
#include <cstdlib>
#include <limits>
#include <utility>

#include "support/env_list.h"
#include "support/pool_settings.h"
#include "support/status.h"

namespace anydev::core {
namespace {

constexpr std::array<std::pair<std::string_view, int>, 9> kLogLevels = {{
    {"trace", 0},
    {"debug", 1},
    {"info", 2},
    {"warn", 3},
    {"warning", 3},
    {"error", 4},
    {"err", 4},
    {"critical", 5},
    {"off", 6},
}};

}  // namespace

const char* env_c_str(const char* name) noexcept { return secure_getenv(name); }

std::optional<std::string> env(const char* name) {
  const char* value = env_c_str(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<bool> parse_plugin_allow_writable(std::string_view text) {
  if (text == "0") return false;
  if (text == "1") return true;
  return std::nullopt;
}

bool plugin_allow_writable() {
  const std::optional<std::string> value = env(kEnvPluginAllowWritable);
  return value && parse_plugin_allow_writable(*value).value_or(false);
}

std::optional<int> parse_log_level(std::string_view text) {
  for (const auto& [name, level] : kLogLevels) {
    if (text == name) return level;
  }
  return std::nullopt;
}

std::string check_log_level(std::string_view text) {
  if (parse_log_level(text)) return std::string();
  return cat(kEnvLogLevel, "=", quoted(text),
             " is not one of trace, debug, info, warn (warning), error (err), critical, off");
}

std::string check_pool(std::string_view text) {
  if (parse_pool_setting(text)) return std::string();
  return cat(kEnvPool, "=", quoted(text), " is not 0 or 1");
}

std::string check_pool_carve(std::string_view text) {
  if (parse_pool_setting(text)) return std::string();
  return cat(kEnvPoolCarve, "=", quoted(text), " is not 0 or 1");
}

std::string check_pool_release_threshold(std::string_view text) {
  if (parse_release_threshold(text)) return std::string();
  return cat(kEnvPoolReleaseThreshold, "=", quoted(text),
             " is not a number of bytes (decimal digits, at most ",
             std::numeric_limits<std::size_t>::max(), ")");
}

std::string check_plugin_path(std::string_view text) {
  if (!text.empty()) return std::string();
  return cat(kEnvPluginPath,
             " is set but empty: expected folders separated by ':' (unset it for none)");
}

std::string check_plugin_allow_writable(std::string_view text) {
  if (parse_plugin_allow_writable(text)) return std::string();
  return cat(kEnvPluginAllowWritable, "=", quoted(text), " is not 0 or 1");
}

std::string core_environment_errors() {
  std::string errors;
  const auto add = [&](const char* name, std::string (*check)(std::string_view)) {
    const std::optional<std::string> value = env(name);
    if (!value) return;
    const std::string error = check(*value);
    if (error.empty()) return;
    if (!errors.empty()) errors += "; ";
    errors += error;
  };
  add(kEnvLogLevel, check_log_level);
  add(kEnvPool, check_pool);
  add(kEnvPoolCarve, check_pool_carve);
  add(kEnvPoolReleaseThreshold, check_pool_release_threshold);
  add(kEnvPluginPath, check_plugin_path);
  add(kEnvPluginAllowWritable, check_plugin_allow_writable);
  return errors;
}

}  // namespace anydev::core

// SPDX-License-Identifier: Apache-2.0
#include "layers/layer_config.h"

#include <algorithm>
#include <optional>

#include "support/env_list.h"
#include "support/environment.h"
#include "support/fork_guard.h"
#include "support/status.h"

namespace anydev::core::layers {
namespace {

constexpr std::uint64_t kMaxCall = 1000000000ull;
constexpr std::array<const char*, kFaultKinds> kKindNames = {"alloc", "copy", "fill", "event",
                                                             "plugin"};

}  // namespace

const char* fault_kind_name(FaultKind kind) noexcept {
  return kKindNames[static_cast<std::size_t>(kind)];
}

bool FaultPlan::empty() const noexcept {
  return std::all_of(calls.begin(), calls.end(), [](const auto& c) { return c.empty(); });
}

FaultParse parse_fault_list(std::string_view text) {
  FaultParse result;
  if (text.empty()) {
    result.error = cat(kEnvFault,
                       " is set but empty: expected a comma-separated list such as \"copy:3\" "
                       "or \"alloc:1,event:2\"");
    return result;
  }
  result.error = check_list_entries(kEnvFault, text, [&](std::string_view entry) {
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      return std::string("has no call number: expected op:n, e.g. \"copy:3\"");
    }
    const std::string_view name = entry.substr(0, colon);
    const auto kind = std::find(kKindNames.begin(), kKindNames.end(), name);
    if (kind == kKindNames.end()) {
      return cat("names no known operation (", quoted(name),
                 "): expected alloc, copy, fill, event or plugin");
    }
    const std::string_view number = entry.substr(colon + 1);
    const auto call = parse_decimal(number, 1, kMaxCall);
    if (!call) {
      return cat("has a bad call number ", quoted(number), ": expected a decimal number from 1 to ",
                 kMaxCall);
    }
    auto& calls = result.plan.calls[static_cast<std::size_t>(kind - kKindNames.begin())];
    if (std::find(calls.begin(), calls.end(), *call) != calls.end()) {
      return std::string("repeats an earlier entry");
    }
    calls.push_back(*call);
    return std::string();
  });
  if (!result.ok()) {
    result.plan = FaultPlan{};
    return result;
  }
  for (auto& calls : result.plan.calls) std::sort(calls.begin(), calls.end());
  result.plan.text = std::string(text);
  return result;
}

SyncParse parse_sync(std::string_view text) {
  SyncParse result;
  if (text == "1") {
    result.on = true;
  } else if (text != "0") {
    result.error = cat(kEnvSync, "=", quoted(text), " is not 0 or 1");
  }
  return result;
}

ValidateParse parse_validate(std::string_view text) {
  ValidateParse result;
  if (text == "1") {
    result.mode = ValidateMode::on;
  } else if (text == "backtrace") {
    result.mode = ValidateMode::backtrace;
  } else if (text != "0") {
    result.error = cat(kEnvValidate, "=", quoted(text), " is not 0, 1 or backtrace");
  }
  return result;
}

TraceParse parse_trace(std::string_view text) {
  TraceParse result;
  if (text.empty()) {
    result.error = cat(kEnvTrace, " is set but empty: expected the path of the JSON file to write");
  } else if (text.back() == '/') {
    result.error = cat(kEnvTrace, "=", quoted(text), " names a folder: expected a file path");
  } else if (text.find('\n') != std::string_view::npos) {
    result.error = cat(kEnvTrace, "=", quoted(text), " contains a newline");
  } else {
    result.path = std::string(text);
  }
  return result;
}

const LayerSettings& layer_settings() {
  // A ProcessObject, not a guarded static: fork-safe (fork_guard.h). Never
  // destroyed.
  static ProcessObject<const LayerSettings> settings;
  return settings.get([] {
    auto* made = new LayerSettings();
    LayerSettings& s = *made;
    auto add_error = [&](const std::string& message) {
      if (!s.errors.empty()) s.errors += "; ";
      s.errors += message;
    };
    // The core's other variables follow the same rule (environment.h).
    if (const std::string core_errors = core_environment_errors(); !core_errors.empty()) {
      add_error(core_errors);
    }
    if (const auto value = env(kEnvFault)) {
      FaultParse parsed = parse_fault_list(*value);
      if (parsed.ok()) {
        s.fault = std::move(parsed.plan);
      } else {
        add_error(parsed.error);
      }
    }
    if (const auto value = env(kEnvSync)) {
      const SyncParse parsed = parse_sync(*value);
      if (parsed.error.empty()) {
        s.sync = parsed.on;
      } else {
        add_error(parsed.error);
      }
    }
    if (const auto value = env(kEnvTrace)) {
      TraceParse parsed = parse_trace(*value);
      if (parsed.error.empty()) {
        s.trace_path = std::move(parsed.path);
      } else {
        add_error(parsed.error);
      }
    }
    if (const auto value = env(kEnvValidate)) {
      const ValidateParse parsed = parse_validate(*value);
      if (parsed.error.empty()) {
        s.validate = parsed.mode;
      } else {
        add_error(parsed.error);
      }
    }
    return made;
  });
}

}  // namespace anydev::core::layers

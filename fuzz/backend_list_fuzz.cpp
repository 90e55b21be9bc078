// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the environment parsers. The first byte picks the parser
// (ANYDEV_BACKEND's list, or ANYDEV_FAULT's), the rest is the value.
// Invariants checked (a violation aborts, which libFuzzer reports):
//  - success: every entry names a known backend, no entry repeats, and
//    printing the entries back and parsing that again gives the same entries;
//  - failure: no entries, and a message that names the variable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "layers/layer_config.h"
#include "runtime/selection.h"

namespace {

void Require(bool condition) {
  if (!condition) std::abort();
}

void BackendList(std::string_view text) {
  static const std::vector<std::string> known = {"cpu",        "cuda",   "hip",
                                                 "level_zero", "opencl", "fake_0"};
  const auto parsed = anydev::core::parse_backend_list(text, known);
  if (!parsed.ok()) {
    Require(parsed.entries.empty());
    Require(parsed.error.rfind("ANYDEV_BACKEND", 0) == 0);
    return;
  }
  Require(!parsed.entries.empty());
  std::string printed;
  for (std::size_t i = 0; i < parsed.entries.size(); ++i) {
    const auto& e = parsed.entries[i];
    Require(e.device >= 0);
    for (std::size_t j = 0; j < i; ++j) {
      Require(!(parsed.entries[j].name == e.name && parsed.entries[j].device == e.device));
    }
    if (i > 0) printed += ',';
    printed += e.name;
    if (e.device_given) printed += ":" + std::to_string(e.device);
  }
  const auto again = anydev::core::parse_backend_list(printed, known);
  Require(again.ok());
  Require(again.entries == parsed.entries);
}

void FaultList(std::string_view text) {
  const auto parsed = anydev::core::layers::parse_fault_list(text);
  if (!parsed.ok()) {
    Require(parsed.plan.empty());
    Require(parsed.error.rfind("ANYDEV_FAULT", 0) == 0);
    return;
  }
  Require(!parsed.plan.empty());
  std::string printed;
  for (int kind = 0; kind < anydev::core::layers::kFaultKinds; ++kind) {
    for (std::uint64_t call : parsed.plan.calls[kind]) {
      Require(call >= 1 && call <= 1000000000u);
      if (!printed.empty()) printed += ',';
      printed +=
          anydev::core::layers::fault_kind_name(static_cast<anydev::core::layers::FaultKind>(kind));
      printed += ":" + std::to_string(call);
    }
  }
  const auto again = anydev::core::layers::parse_fault_list(printed);
  Require(again.ok());
  Require(again.plan.calls == parsed.plan.calls);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    BackendList(text);
  } else {
    FaultList(text);
  }
  return 0;
}

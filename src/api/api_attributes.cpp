// SPDX-License-Identifier: Apache-2.0
// C entry points: device attributes, the device's UUID and PCI address, and
// the vendor API's version (docs/backends.md, "Device attributes"). The
// backend answers through its optional device_attribute, device_uuid and
// api_version entries; the core checks the arguments, names the attribute in
// every message and answers UNSUPPORTED for a table without the entry.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "anydev/anydev.h"
#include "api/api_common.h"
#include "support/backend_calls.h"

using namespace anydev::core;

namespace {

constexpr const char* kNames[] = {
    "compute_units",
    "clock_rate_khz",
    "memory_clock_rate_khz",
    "memory_bus_width_bits",
    "l2_cache_bytes",
    "max_allocation_bytes",
    "total_memory_bytes",
    "unified_addressing",
    "integrated",
    "pci_domain",
    "pci_bus",
    "pci_device",
    "pci_function",
    "max_threads_per_group",
    "simd_width",
    "compute_capability_major",
    "compute_capability_minor",
};
static_assert(static_cast<int>(sizeof kNames / sizeof kNames[0]) == ANYDEV_ATTRIBUTE_COUNT,
              "one name per attribute");

const char* name_of(int attribute) {
  return attribute >= 0 && attribute < ANYDEV_ATTRIBUTE_COUNT ? kNames[attribute] : "unknown";
}

// `what` names the value asked for (an attribute's name, "the UUID"), so the
// error says which value is missing, not only which entry.
anydev_status_t missing(const char* op, const ContextState& state, const char* entry,
                        const char* what) {
  return fail(ANYDEV_ERROR_UNSUPPORTED, op, what, ": the ", state.backend->name,
              " backend reports no device attributes (its table has no ", entry, " entry)");
}

}  // namespace

extern "C" {

const char* anydev_device_attribute_name(anydev_device_attribute_t attribute) {
  const int value = static_cast<int>(attribute);
  return value >= 0 && value < ANYDEV_ATTRIBUTE_COUNT ? kNames[value] : nullptr;
}

anydev_status_t anydev_device_attribute_from_name(const char* name,
                                                  anydev_device_attribute_t* out) {
  static constexpr const char* op = "anydev_device_attribute_from_name";
  ANYDEV_REQUIRE_ARG(op, name);
  ANYDEV_REQUIRE_ARG(op, out);
  for (int i = 0; i < ANYDEV_ATTRIBUTE_COUNT; ++i) {
    if (std::strcmp(kNames[i], name) == 0) {
      *out = static_cast<anydev_device_attribute_t>(i);
      return ANYDEV_SUCCESS;
    }
  }
  return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown device attribute \"", name, "\"");
}

anydev_status_t anydev_context_get_attribute(anydev_context_t ctx,
                                             anydev_device_attribute_t attribute, int64_t* value) {
  static constexpr const char* op = "anydev_context_get_attribute";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, value);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const int raw = static_cast<int>(attribute);
  if (raw < 0 || raw >= ANYDEV_ATTRIBUTE_COUNT) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "unknown device attribute ", raw, " (0 to ",
                ANYDEV_ATTRIBUTE_COUNT - 1, ")");
  }
  const ContextState& state = *ctx->state;
  const anydev_backend_table_t* table = state.backend->table;
  if (table->device_attribute == nullptr) {
    return missing(op, state, "device_attribute", name_of(raw));
  }
  return guarded(op, [&] {
    std::int64_t out = 0;
    if (anydev_status_t s = bk(table).device_attribute(state.device, raw, &out);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, name_of(raw), " of ", describe_device(state.backend, state.device), ": ",
                  last_error_message());
    }
    *value = out;
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_device_uuid(anydev_context_t ctx, uint8_t uuid[16]) {
  static constexpr const char* op = "anydev_context_device_uuid";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, uuid);
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  const anydev_backend_table_t* table = state.backend->table;
  if (table->device_uuid == nullptr) return missing(op, state, "device_uuid", "the UUID");
  return guarded(op, [&] {
    std::uint8_t out[16] = {};
    if (anydev_status_t s = bk(table).device_uuid(state.device, out); s != ANYDEV_SUCCESS) {
      return fail(s, op, "the UUID of ", describe_device(state.backend, state.device), ": ",
                  last_error_message());
    }
    std::memcpy(uuid, out, sizeof out);
    return ANYDEV_SUCCESS;
  });
}

anydev_status_t anydev_context_pci_bus_id(anydev_context_t ctx, char* out, size_t capacity) {
  static constexpr const char* op = "anydev_context_pci_bus_id";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (capacity < 13) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "capacity ", capacity,
                " bytes; \"dddd:bb:dd.f\" needs 13");
  }
  std::int64_t parts[4] = {};
  const anydev_device_attribute_t which[4] = {ANYDEV_ATTRIBUTE_PCI_DOMAIN, ANYDEV_ATTRIBUTE_PCI_BUS,
                                              ANYDEV_ATTRIBUTE_PCI_DEVICE,
                                              ANYDEV_ATTRIBUTE_PCI_FUNCTION};
  for (int i = 0; i < 4; ++i) {
    if (anydev_status_t s = anydev_context_get_attribute(ctx, which[i], &parts[i]);
        s != ANYDEV_SUCCESS) {
      return s;
    }
  }
  std::snprintf(
      out, capacity, "%04llx:%02llx:%02llx.%llx", static_cast<unsigned long long>(parts[0]),
      static_cast<unsigned long long>(parts[1]), static_cast<unsigned long long>(parts[2]),
      static_cast<unsigned long long>(parts[3]));
  return ANYDEV_SUCCESS;
}

anydev_status_t anydev_context_api_version(anydev_context_t ctx, char* out, size_t capacity) {
  static constexpr const char* op = "anydev_context_api_version";
  ANYDEV_REQUIRE_ARG(op, ctx);
  ANYDEV_REQUIRE_ARG(op, out);
  if (capacity == 0) return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "capacity 0");
  if (anydev_status_t s = check_fork(op, ctx, "context"); s != ANYDEV_SUCCESS) return s;
  const ContextState& state = *ctx->state;
  const anydev_backend_table_t* table = state.backend->table;
  if (table->api_version == nullptr) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "the ", state.backend->name,
                " backend reports no API version (its table has no api_version entry)");
  }
  return guarded(op, [&] {
    char text[256] = {};
    if (anydev_status_t s = bk(table).api_version(state.device, text, sizeof text);
        s != ANYDEV_SUCCESS) {
      return fail(s, op, "the API version of ", describe_device(state.backend, state.device), ": ",
                  last_error_message());
    }
    text[sizeof text - 1] = '\0';
    std::snprintf(out, capacity, "%s", text);
    return ANYDEV_SUCCESS;
  });
}

}  // extern "C"

// SPDX-License-Identifier: Apache-2.0
// Layers wrap any number of backend tables (the table's instance
// pointer, src/layers/layer_table.h): each layer, and all four stacked as
// wrap_backend stacks them, wraps more tables than the old 16 slots, and
// every entry called through a wrapped table reaches the right inner table
// with that table's own instance; an optional entry an inner table leaves
// NULL stays NULL through every layer.
//
// The inner tables are fakes: every entry records, on the FakeBackend its
// instance points to, that it was called; an instance that is none of the
// fakes is counted as a wrong instance. Each entry is called with zeroed
// arguments (pointers to a zeroed scratch area), which every layer forwards.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "anydev/backend.h"
#include "layers/fault_injection.h"
#include "layers/sync_mode.h"
#include "layers/trace.h"
#include "layers/validation.h"
#include "support/backend_calls.h"

namespace {

namespace layers = anydev::core::layers;

// The entries, by index, with their names and whether they are optional.
enum Entry : std::size_t {
#define ANYDEV_TEST_ENTRY_INDEX_(unused, need, name, params) k_##name,
  ANYDEV_BACKEND_ENTRIES(ANYDEV_TEST_ENTRY_INDEX_, ~)
#undef ANYDEV_TEST_ENTRY_INDEX_
      kEntries
};
constexpr std::array<const char*, kEntries> kEntryNames = {
#define ANYDEV_TEST_ENTRY_NAME_(unused, need, name, params) #name,
    ANYDEV_BACKEND_ENTRIES(ANYDEV_TEST_ENTRY_NAME_, ~)
#undef ANYDEV_TEST_ENTRY_NAME_
};
#define ANYDEV_TEST_IS_OPTIONAL_REQUIRED false
#define ANYDEV_TEST_IS_OPTIONAL_OPTIONAL true
constexpr std::array<bool, kEntries> kOptional = {
#define ANYDEV_TEST_ENTRY_OPTIONAL_(unused, need, name, params) ANYDEV_TEST_IS_OPTIONAL_##need,
    ANYDEV_BACKEND_ENTRIES(ANYDEV_TEST_ENTRY_OPTIONAL_, ~)
#undef ANYDEV_TEST_ENTRY_OPTIONAL_
};

// More inner tables than a fixed array of 16 slots per layer would hold.
constexpr std::size_t kTables = 20;

// One fake backend: its table (whose instance is this object) and how often
// each entry was called with this instance. Used from the test's thread only
// (no traced stream here ever has pending work, so the tracer starts no
// thread).
struct FakeBackend {
  anydev_backend_table_t table{};
  std::array<int, kEntries> calls{};
};

std::array<FakeBackend, kTables> g_fakes;
int g_wrong_instance = 0;

void record(void* instance, Entry entry) {
  for (FakeBackend& fake : g_fakes) {
    if (instance == &fake) {
      ++fake.calls[entry];
      return;
    }
  }
  ++g_wrong_instance;
}

void reset_counts() {
  for (FakeBackend& fake : g_fakes) fake.calls = {};
  g_wrong_instance = 0;
}

// The fakes' tables: every entry records its call; with `optional` false the
// optional entries stay NULL.
void make_fake_tables(bool optional) {
  for (FakeBackend& fake : g_fakes) {
    anydev_backend_table_t& t = fake.table;
    t = anydev_backend_table_t{};
    t.struct_size = sizeof(t);
    t.abi_version = ANYDEV_BACKEND_ABI_VERSION;
    t.name = "fake";
    t.instance = &fake;
#define ANYDEV_TEST_SET_FAKE_(unused, need, name, params)     \
  if (optional || !kOptional[k_##name]) {                     \
    t.name = [](void* instance, auto...) -> anydev_status_t { \
      record(instance, k_##name);                             \
      return ANYDEV_SUCCESS;                                  \
    };                                                        \
  }
    ANYDEV_BACKEND_ENTRIES(ANYDEV_TEST_SET_FAKE_, ~)
#undef ANYDEV_TEST_SET_FAKE_
    // The tracer waits for an event it recorded: this one is complete.
    t.event_query = [](void* instance, anydev_bk_event_t, int* complete) -> anydev_status_t {
      record(instance, k_event_query);
      *complete = 1;
      return ANYDEV_SUCCESS;
    };
  }
}

// Zeroed arguments: pointers into a zeroed scratch area (big enough for
// every out parameter), everything else value-initialized.
alignas(64) std::array<unsigned char, 4096> g_scratch{};

template <class T>
T scratch_arg() {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(g_scratch.data());
  } else {
    return T{};
  }
}

template <class... Args>
anydev_status_t call_zeroed(anydev_status_t (*entry)(void*, Args...), void* instance) {
  return entry(instance, scratch_arg<Args>()...);
}

// Calls entry `which` of `table` with its instance and zeroed arguments.
anydev_status_t call_entry(const anydev_backend_table_t* table, Entry which) {
  g_scratch = {};
  switch (which) {
#define ANYDEV_TEST_CALL_(unused, need, name, params) \
  case k_##name:                                      \
    return call_zeroed(table->name, table->instance);
    ANYDEV_BACKEND_ENTRIES(ANYDEV_TEST_CALL_, ~)
#undef ANYDEV_TEST_CALL_
    case kEntries:
      break;
  }
  return ANYDEV_ERROR_INTERNAL;
}

bool has_entry(const anydev_backend_table_t* table, Entry which) {
  switch (which) {
#define ANYDEV_TEST_HAS_(unused, need, name, params) \
  case k_##name:                                     \
    return table->name != nullptr;
    ANYDEV_BACKEND_ENTRIES(ANYDEV_TEST_HAS_, ~)
#undef ANYDEV_TEST_HAS_
    case kEntries:
      break;
  }
  return false;
}

// Wrapped tables live for the process (the registry keeps them); the test
// keeps every one it makes here, so that none is a leak.
const anydev_backend_table_t* kept(const anydev_backend_table_t* table) {
  static auto* tables = new std::vector<const anydev_backend_table_t*>();
  tables->push_back(table);
  return table;
}

const anydev_backend_table_t* wrap_all_four(const anydev_backend_table_t* inner) {
  // The order of wrap_backend (layer_stack.cpp): tracing innermost.
  const anydev_backend_table_t* table = kept(layers::wrap_trace(inner));
  table = kept(layers::wrap_validation(table));
  table = kept(layers::wrap_fault_injection(table));
  return layers::wrap_sync_mode(table);
}

struct LayerCase {
  const char* name;
  const anydev_backend_table_t* (*wrap)(const anydev_backend_table_t*);
};
const LayerCase kLayers[] = {
    {"tracing", layers::wrap_trace},
    {"validation", layers::wrap_validation},
    {"fault injection", layers::wrap_fault_injection},
    {"synchronous mode", layers::wrap_sync_mode},
    {"all four stacked", wrap_all_four},
};

TEST(LayerTables, EveryLayerWrapsMoreThanSixteenTablesAndCallsReachTheirOwnInstance) {
  make_fake_tables(/*optional=*/true);
  for (const LayerCase& layer : kLayers) {
    std::vector<const anydev_backend_table_t*> wrapped;
    for (FakeBackend& fake : g_fakes) {
      wrapped.push_back(kept(layer.wrap(&fake.table)));
      ASSERT_NE(wrapped.back(), nullptr) << layer.name << ": table " << wrapped.size();
    }
    for (std::size_t i = 0; i < kTables; ++i) {
      const anydev_backend_table_t* table = wrapped[i];
      EXPECT_NE(table->instance, g_fakes[i].table.instance)
          << layer.name << ": a wrapped table has the layer's own instance";
      for (std::size_t e = 0; e < kEntries; ++e) {
        const auto entry = static_cast<Entry>(e);
        SCOPED_TRACE(std::string(layer.name) + ", table " + std::to_string(i) + ", " +
                     kEntryNames[e]);
        ASSERT_TRUE(has_entry(table, entry));
        reset_counts();
        EXPECT_EQ(call_entry(table, entry), ANYDEV_SUCCESS);
        EXPECT_EQ(g_wrong_instance, 0) << "an inner entry got an instance that is no table's";
        EXPECT_GE(g_fakes[i].calls[e], 1) << "the call did not reach its inner table";
        for (std::size_t other = 0; other < kTables; ++other) {
          if (other == i) continue;
          int calls = 0;
          for (int n : g_fakes[other].calls) calls += n;
          EXPECT_EQ(calls, 0) << "the call reached inner table " << other;
        }
      }
    }
  }
}

TEST(LayerTables, NullOptionalEntryStaysNullThroughEveryLayer) {
  make_fake_tables(/*optional=*/false);
  for (const LayerCase& layer : kLayers) {
    for (FakeBackend& fake : g_fakes) {
      const anydev_backend_table_t* table = kept(layer.wrap(&fake.table));
      ASSERT_NE(table, nullptr) << layer.name;
      for (std::size_t e = 0; e < kEntries; ++e) {
        EXPECT_EQ(has_entry(table, static_cast<Entry>(e)), !kOptional[e])
            << layer.name << ": " << kEntryNames[e];
      }
    }
  }
}

TEST(LayerTables, CoreCallHelperPassesTheTablesInstance) {
  make_fake_tables(/*optional=*/true);
  reset_counts();
  int count = 0;
  EXPECT_EQ(anydev::core::bk(&g_fakes[7].table).device_count(&count), ANYDEV_SUCCESS);
  EXPECT_EQ(g_fakes[7].calls[k_device_count], 1);
  EXPECT_EQ(g_wrong_instance, 0);
}

}  // namespace

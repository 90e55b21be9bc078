// SPDX-License-Identifier: Apache-2.0
// The kit's table builder and the instance (include/anydev/kit/table.h):
// kit::entry<f> drops the instance and forwards every argument to an f
// written without it, is f itself when f takes the instance, and
// ANYDEV_KIT_BACKEND_TABLE carries the instance and the adapted entries.
#include <gtest/gtest.h>

#include "anydev/kit/table.h"

namespace {

namespace kit = anydev::kit;

// What the last call of the fakes below saw. Test thread only.
struct Seen {
  void* instance = nullptr;
  anydev_bk_stream_t stream = nullptr;
  anydev_bk_memory_ref_t dst{};
  anydev_bk_memory_ref_t src{};
  size_t bytes = 0;
};
Seen g_seen;

anydev_status_t copy_without_instance(anydev_bk_stream_t stream, anydev_bk_memory_ref_t dst,
                                      anydev_bk_memory_ref_t src, size_t bytes) {
  g_seen = Seen{nullptr, stream, dst, src, bytes};
  return ANYDEV_ERROR_DEVICE;  // a status that cannot be mistaken for a default
}

anydev_status_t native_handle_with_instance(void* instance, int, int, void*, void**) {
  g_seen.instance = instance;
  return ANYDEV_SUCCESS;
}

TEST(KitTable, EntryDropsTheInstanceAndForwardsEveryArgument) {
  constexpr decltype(anydev_backend_table_t::copy) copy = kit::entry<copy_without_instance>;
  int marker = 0;
  const auto stream = reinterpret_cast<anydev_bk_stream_t>(&marker);
  const anydev_bk_memory_ref_t dst{&marker, 16, ANYDEV_BK_MEMORY_DEVICE, 1};
  const anydev_bk_memory_ref_t src{&g_seen, 32, ANYDEV_BK_MEMORY_HOST, 2};
  g_seen = Seen{};
  EXPECT_EQ(copy(&marker, stream, dst, src, 48), ANYDEV_ERROR_DEVICE);
  EXPECT_EQ(g_seen.stream, stream);
  EXPECT_EQ(g_seen.dst.handle, &marker);
  EXPECT_EQ(g_seen.dst.offset, 16u);
  EXPECT_EQ(g_seen.dst.kind, ANYDEV_BK_MEMORY_DEVICE);
  EXPECT_EQ(g_seen.dst.device, 1);
  EXPECT_EQ(g_seen.src.handle, &g_seen);
  EXPECT_EQ(g_seen.src.offset, 32u);
  EXPECT_EQ(g_seen.src.kind, ANYDEV_BK_MEMORY_HOST);
  EXPECT_EQ(g_seen.src.device, 2);
  EXPECT_EQ(g_seen.bytes, 48u);
}

TEST(KitTable, EntryThatTakesTheInstanceIsUsedAsIs) {
  static_assert(kit::entry<native_handle_with_instance> == &native_handle_with_instance);
  constexpr auto native_handle = kit::entry<native_handle_with_instance>;
  int state = 0;
  void* out = nullptr;
  g_seen = Seen{};
  EXPECT_EQ(native_handle(&state, 0, ANYDEV_NATIVE_DEVICE, nullptr, &out), ANYDEV_SUCCESS);
  EXPECT_EQ(g_seen.instance, &state);
}

TEST(KitTable, BackendTableCarriesTheInstanceAndOptionalEntries) {
  static int state = 0;
  constexpr anydev_backend_table_t table = kit::with_optional_entries(
      kit::table_header("kittest"),
      kit::optional_entries{.instance = &state,
                            .native_handle = kit::entry<native_handle_with_instance>});
  EXPECT_EQ(table.instance, &state);
  EXPECT_EQ(table.native_handle, &native_handle_with_instance);
  EXPECT_EQ(table.memory_free_async, nullptr);
  EXPECT_EQ(table.abi_version, ANYDEV_BACKEND_ABI_VERSION);
}

}  // namespace

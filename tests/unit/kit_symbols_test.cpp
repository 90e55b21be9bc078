// SPDX-License-Identifier: Apache-2.0
// Symbol tables from an X-macro list (include/anydev/kit/symbols.h):
// REQUIRED entries must be found, OPTIONAL ones may stay null.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "anydev/kit/symbols.h"

namespace {

int one() { return 1; }
int two() { return 2; }

// A resolver over a fixed map: the kit only needs key_type and operator().
class map_resolver {
 public:
  using key_type = std::string;
  explicit map_resolver(std::map<std::string, void*> symbols) : symbols_(std::move(symbols)) {}
  void* operator()(const std::string& key, std::string* why) const {
    auto it = symbols_.find(key);
    if (it != symbols_.end()) return it->second;
    *why = "no " + key + " in the map";
    return nullptr;
  }

 private:
  std::map<std::string, void*> symbols_;
};

using int_fn = int (*)();

#define TEST_SYMBOLS(X)                   \
  X(first, REQUIRED, int_fn, "first_key") \
  X(maybe, OPTIONAL, int_fn, "maybe_key") \
  X(second, REQUIRED, int_fn, "second_key")

struct test_table {
  ANYDEV_KIT_SYMBOL_FIELDS(TEST_SYMBOLS)
};

void* address(int_fn fn) { return reinterpret_cast<void*>(fn); }

TEST(KitSymbols, EveryRequiredEntryFoundFillsTheTableAndLeavesAMissingOptionalNull) {
  const map_resolver resolver({{"first_key", address(one)}, {"second_key", address(two)}});
  test_table table;
  anydev::kit::missing_symbol<std::string> missing;
  ASSERT_TRUE(ANYDEV_KIT_RESOLVE_SYMBOLS(TEST_SYMBOLS, table, resolver, &missing));
  ASSERT_NE(table.first, nullptr);
  ASSERT_NE(table.second, nullptr);
  EXPECT_EQ(table.first(), 1);
  EXPECT_EQ(table.second(), 2);
  EXPECT_EQ(table.maybe, nullptr);
  EXPECT_EQ(missing.member, nullptr);
}

TEST(KitSymbols, OptionalEntryIsFilledWhenPresent) {
  const map_resolver resolver(
      {{"first_key", address(one)}, {"maybe_key", address(two)}, {"second_key", address(two)}});
  test_table table;
  anydev::kit::missing_symbol<std::string> missing;
  ASSERT_TRUE(ANYDEV_KIT_RESOLVE_SYMBOLS(TEST_SYMBOLS, table, resolver, &missing));
  ASSERT_NE(table.maybe, nullptr);
  EXPECT_EQ(table.maybe(), 2);
}

TEST(KitSymbols, MissingRequiredEntryFailsAndNamesTheMemberTheKeyAndWhy) {
  const map_resolver resolver({{"first_key", address(one)}});
  test_table table;
  anydev::kit::missing_symbol<std::string> missing;
  EXPECT_FALSE(ANYDEV_KIT_RESOLVE_SYMBOLS(TEST_SYMBOLS, table, resolver, &missing));
  ASSERT_NE(missing.member, nullptr);
  EXPECT_STREQ(missing.member, "second");
  EXPECT_EQ(missing.key, "second_key");
  EXPECT_EQ(missing.why, "no second_key in the map");
}

}  // namespace

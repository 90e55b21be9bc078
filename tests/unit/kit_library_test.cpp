// SPDX-License-Identifier: Apache-2.0
// The backend kit's library opening (include/anydev/kit/library.h): one
// error format naming the file, the dlerror() text and the hint.
#include <gtest/gtest.h>

#include <string>

#include "anydev/kit/library.h"

namespace {

TEST(KitLibrary, OpenFailureNamesTheFileTheDlerrorTextAndTheHint) {
  std::string error;
  void* library = anydev::kit::open_library("no-such-folder/libnothing.so.1", "vendor library",
                                            "VENDOR_LIBRARY overrides the path", &error);
  EXPECT_EQ(library, nullptr);
  EXPECT_NE(error.find("cannot open the vendor library \"no-such-folder/libnothing.so.1\": "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("cannot open shared object file"), std::string::npos) << error;
  EXPECT_NE(error.find(" (VENDOR_LIBRARY overrides the path)"), std::string::npos) << error;
}

TEST(KitLibrary, OpenFailureWithoutHintEndsWithTheDlerrorText) {
  EXPECT_EQ(anydev::kit::open_failure("plugin", "a.so", "gone", ""),
            "cannot open the plugin \"a.so\": gone");
}

TEST(KitLibrary, SymbolFailureNamesTheFileTheSymbolAndWhy) {
  EXPECT_EQ(anydev::kit::symbol_failure("vendor library", "v.so", "vendorInit", "undefined"),
            "the vendor library \"v.so\" lacks the required entry point vendorInit: undefined");
}

TEST(KitLibrary, SymbolFailureNamesTheFileTheLoaderOpened) {
  EXPECT_EQ(anydev::kit::symbol_failure("vendor library", "v.so.1", "vendorInit", "gone",
                                        "/usr/lib/v.so.1.2"),
            "the vendor library \"v.so.1\" (/usr/lib/v.so.1.2) lacks the required entry point "
            "vendorInit: gone");
}

TEST(KitLibrary, DlsymResolverFindsASymbolAndSaysWhyOneIsMissing) {
  std::string error;
  void* library = anydev::kit::open_library("libc.so.6", "C library", "", &error);
  ASSERT_NE(library, nullptr) << error;
  const anydev::kit::dlsym_resolver resolve(library);
  std::string why;
  EXPECT_NE(resolve("strlen", &why), nullptr);
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(resolve("anydev_kit_no_such_symbol", &why), nullptr);
  EXPECT_NE(why.find("anydev_kit_no_such_symbol"), std::string::npos) << why;
  dlclose(library);
}

}  // namespace

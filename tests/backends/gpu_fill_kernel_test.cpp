// SPDX-License-Identifier: Apache-2.0
// Fills on a GPU backend with anydev's fill kernel (cuda, hip, level_zero)
// write exact bits through both of their paths: the kernel (one launch for a
// fill of an 8- or 16-byte period in device memory) and, when the emulator
// refuses the module or the kernel is turned off, the fill plan of memsets
// and copies. Every pattern width (1, 2, 4, 8, 16) at every size class
// (under one 16-byte vector, around one, many, past a page) and every start
// the fill allows (each 4-byte offset within 16 bytes, and the odd ones for
// 1- and 2-byte patterns), through a view, so that the bytes around it must
// keep theirs. The emulator performs the kernel by name from its parameters
// (tests/emulators/common/core_kernels.h) and counts its loads and launches.
//
// One program for every backend; the run's environment names the backend
// and its emulator (tests/backends/<backend>/CMakeLists.txt):
//   ANYDEV_TEST_FILL_BACKEND   the backend ("hip")
//   ANYDEV_TEST_FILL_EMULATOR  the emulator library the backend opened
//   ANYDEV_TEST_FILL_COUNTS    its call count functions' prefix
//                              ("anydev_hip_emulator")
//   ANYDEV_TEST_FILL_CALLS     its load, get-function and launch entry points,
//                              comma-separated
//   ANYDEV_TEST_FILL_KERNEL    1: wide fills launch the kernel; 0: they run
//                              the fill plan (module refused, switched off)
#include "gpu_fill_kernel.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "anydev/anydev.h"

namespace {

std::string last_error() { return anydev_last_error_message(); }

#define ASSERT_OK(expr) ASSERT_EQ((expr), ANYDEV_SUCCESS) << last_error()

std::string setting(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// The backend under test and its emulator's counts (load() after the
// backend opened the emulator).
struct Counts {
  void load() {
    backend = setting("ANYDEV_TEST_FILL_BACKEND");
    kernel = setting("ANYDEV_TEST_FILL_KERNEL") == "1";
    std::istringstream calls(setting("ANYDEV_TEST_FILL_CALLS"));
    std::getline(calls, load_call, ',');
    std::getline(calls, get_call, ',');
    std::getline(calls, launch_call, ',');
    void* library = dlopen(setting("ANYDEV_TEST_FILL_EMULATOR").c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) return;
    const std::string prefix = setting("ANYDEV_TEST_FILL_COUNTS");
    reset = reinterpret_cast<void (*)()>(dlsym(library, (prefix + "_reset_call_counts").c_str()));
    count = reinterpret_cast<unsigned long long (*)(const char*)>(
        dlsym(library, (prefix + "_call_count").c_str()));
  }
  std::string backend;
  bool kernel = false;
  std::string load_call;
  std::string get_call;
  std::string launch_call;
  void (*reset)() = nullptr;
  unsigned long long (*count)(const char*) = nullptr;
};

// One pattern of each kind the fill takes: every byte differs, so a byte at
// the wrong phase shows.
struct PatternCase {
  const char* name;
  std::vector<unsigned char> bytes;
  bool wide;  // its shortest period is 8 or 16 bytes: the kernel's
};

std::vector<PatternCase> patterns() {
  std::vector<unsigned char> sixteen(16);
  for (std::size_t i = 0; i < 16; ++i) sixteen[i] = static_cast<unsigned char>(0xA0 + i * 5);
  std::vector<unsigned char> eight(sixteen.begin(), sixteen.begin() + 8);
  std::vector<unsigned char> two_eights = eight;
  two_eights.insert(two_eights.end(), eight.begin(), eight.end());
  std::vector<unsigned char> four_fours;
  for (int i = 0; i < 4; ++i)
    four_fours.insert(four_fours.end(), sixteen.begin(), sixteen.begin() + 4);
  return {
      {"1 byte", {0x5A}, false},
      {"2 bytes", {0x12, 0xEF}, false},
      {"4 bytes", {0x01, 0x80, 0x7F, 0xFE}, false},
      {"8 bytes", eight, true},
      {"16 bytes", sixteen, true},
      {"16 bytes of period 8", two_eights, true},
      {"16 bytes of period 4", four_fours, false},
  };
}

// Fill sizes in pattern repetitions: one, a few, around a 16-byte vector and
// a 256-thread block, a page and more, 1 MiB and one more.
constexpr std::size_t kRepeats[] = {1, 2, 3, 5, 17, 255, 256, 257, 4097, 65537};

class FillKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    counts_.load();
    ASSERT_OK(anydev_context_create(counts_.backend.c_str(), 0, &ctx_));
    counts_.load();  // the backend has opened the emulator now
    if (counts_.reset == nullptr || counts_.count == nullptr || counts_.launch_call.empty()) {
      GTEST_FAIL() << "the emulator's call counts are missing (ANYDEV_TEST_FILL_* settings)";
    }
  }
  void TearDown() override {
    if (ctx_ != nullptr) anydev_context_release(ctx_);
  }

  // Fills `bytes` at byte `offset` of a `kind` buffer with `pattern`; checks
  // every byte of the buffer and the launches made.
  void check(anydev_memory_kind_t kind, const PatternCase& pattern, std::size_t offset,
             std::size_t bytes) {
    SCOPED_TRACE(std::string(pattern.name) + ", " + std::to_string(bytes) + " bytes at offset " +
                 std::to_string(offset) + (kind == ANYDEV_MEMORY_DEVICE ? ", device" : ", pinned"));
    const std::size_t total = offset + bytes + 21;
    std::vector<unsigned char> before(total);
    for (std::size_t i = 0; i < total; ++i) before[i] = static_cast<unsigned char>(i * 7 + 3);
    anydev_buffer_t parent = nullptr;
    anydev_buffer_t view = nullptr;
    ASSERT_OK(anydev_buffer_create(ctx_, kind, ANYDEV_DTYPE_UINT8, total, &parent));
    ASSERT_OK(anydev_enqueue_copy_from_host(ctx_, parent, before.data(), total));
    ASSERT_OK(anydev_buffer_create_sub_buffer(parent, ANYDEV_DTYPE_UINT8, offset, bytes, &view));
    ASSERT_OK(anydev_context_synchronize(ctx_));

    counts_.reset();
    ASSERT_OK(anydev_enqueue_fill(ctx_, view, pattern.bytes.data(), pattern.bytes.size()));
    const bool kernel = pattern.wide && kind == ANYDEV_MEMORY_DEVICE && counts_.kernel;
    EXPECT_EQ(counts_.count(counts_.launch_call.c_str()), kernel ? 1u : 0u);

    std::vector<unsigned char> after(total);
    ASSERT_OK(anydev_enqueue_copy_to_host(ctx_, after.data(), total, parent));
    ASSERT_OK(anydev_context_synchronize(ctx_));
    std::vector<unsigned char> expected = before;
    for (std::size_t i = 0; i < bytes; ++i) {
      expected[offset + i] = pattern.bytes[i % pattern.bytes.size()];
    }
    for (std::size_t i = 0; i < total; ++i) {
      if (after[i] != expected[i]) {
        ADD_FAILURE() << "byte " << i << " is " << int{after[i]} << ", expected "
                      << int{expected[i]} << " (the fill covers " << offset << ".."
                      << offset + bytes << ")";
        break;
      }
    }
    anydev_buffer_release(view);
    anydev_buffer_release(parent);
  }

  anydev_context_t ctx_ = nullptr;
  Counts counts_;
};

TEST_F(FillKernel, EveryWidthSizeAndOffsetGetsExactBits) {
  for (const anydev_memory_kind_t kind : {ANYDEV_MEMORY_DEVICE, ANYDEV_MEMORY_HOST}) {
    for (const PatternCase& pattern : patterns()) {
      const std::size_t width = pattern.bytes.size();
      // A fill's start must be a multiple of min(width, 4) bytes.
      const std::size_t step = width < 4 ? width : 4;
      for (std::size_t offset = 0; offset < 16; offset += step) {
        for (const std::size_t repeats : kRepeats) {
          check(kind, pattern, offset, repeats * width);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// The module loads once per device: the first wide fill loads it (or learns
// that it cannot), later ones only launch.
TEST_F(FillKernel, TheModuleLoadsOncePerDevice) {
  anydev_buffer_t buffer = nullptr;
  ASSERT_OK(anydev_buffer_create(ctx_, ANYDEV_MEMORY_DEVICE, ANYDEV_DTYPE_UINT8, 4096, &buffer));
  const unsigned char pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  ASSERT_OK(anydev_enqueue_fill(ctx_, buffer, pattern, 16));  // loads, if not yet
  counts_.reset();
  for (int i = 0; i < 3; ++i) ASSERT_OK(anydev_enqueue_fill(ctx_, buffer, pattern, 16));
  ASSERT_OK(anydev_context_synchronize(ctx_));
  EXPECT_EQ(counts_.count(counts_.load_call.c_str()), 0u);
  EXPECT_EQ(counts_.count(counts_.get_call.c_str()), 0u);
  EXPECT_EQ(counts_.count(counts_.launch_call.c_str()), counts_.kernel ? 3u : 0u);
  anydev_buffer_release(buffer);
}

// The launch shape: one 16-byte store per thread up to the cap of 8 blocks a
// multiprocessor, never an empty grid (the head and tail need 16 threads).
TEST(WideFillLaunch, BlocksCoverTheFillUpToTheCap) {
  using anydev::gpu::wide_fill_blocks;
  EXPECT_EQ(wide_fill_blocks(0, 132), 1u);
  EXPECT_EQ(wide_fill_blocks(8, 132), 1u);
  EXPECT_EQ(wide_fill_blocks(4096, 132), 1u);
  EXPECT_EQ(wide_fill_blocks(4097, 132), 2u);
  EXPECT_EQ(wide_fill_blocks(std::size_t{256} << 20, 132), 132u * 8);
  EXPECT_EQ(wide_fill_blocks(std::size_t{256} << 20, 0), 8u);
}

// The arguments anchor the pattern to addresses: at every start, the byte at
// address a gets byte (a mod 16) of lo | hi << 64, and that is the fill's
// pattern from its first byte on.
TEST(WideFillLaunch, ArgumentsAnchorThePatternToAddresses) {
  const unsigned char pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  for (const std::size_t period : {std::size_t{8}, std::size_t{16}}) {
    for (std::uintptr_t address = 0x1000; address < 0x1010; address += 4) {
      const anydev::gpu::WideFillArgs args =
          anydev::gpu::wide_fill_args(address, pattern, period, 64);
      EXPECT_EQ(args.dst, address);
      EXPECT_EQ(args.bytes, 64u);
      unsigned char anchored[16];
      std::memcpy(anchored, &args.lo, 8);
      std::memcpy(anchored + 8, &args.hi, 8);
      for (std::size_t i = 0; i < 64; ++i) {
        ASSERT_EQ(anchored[(address + i) % 16], pattern[i % period])
            << "period " << period << ", address " << address << ", byte " << i;
      }
    }
  }
}

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// The binaries of anydev's fill kernel that the hip and level_zero plugins
// embed (made by scripts/make-fill-kernels) declare the kernel of the
// contract (backends/gpu/gpu_fill_kernel.h): every AMD GPU code object is for
// the architecture it is listed under and has anydev_fill_pattern16 with
// four 8-byte explicit arguments, and so does the SPIR-V module's kernel
// entry point. Read with the emulators' own parsers (core_images.h), which
// must also refuse what is not such an image.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core_config.h"
#include "core_images.h"
#include "hip_fill_code_objects.h"
#include "lz_fill_spirv.h"

// The core's settings and misuse lines under a name of this test's own.
extern const anydev_emu::core::Identity anydev_emu::core::kIdentity{"ANYDEV_TEST_EMULATOR_",
                                                                    "anydev-test-emulator"};

namespace {

namespace core = anydev_emu::core;

const std::vector<std::size_t> kFourWords{8, 8, 8, 8};

TEST(FillKernelImages, EveryCodeObjectIsForItsArchitectureAndDeclaresTheKernel) {
  ASSERT_FALSE(anydev::hip::fill_code_objects().empty());
  for (const anydev::hip::FillCodeObject& object : anydev::hip::fill_code_objects()) {
    SCOPED_TRACE(object.arch);
    std::string processor;
    std::vector<core::KernelEntry> entries;
    ASSERT_EQ(core::parse_amdgpu_code_object("test", object.bytes, &processor, &entries),
              core::Status::success);
    EXPECT_EQ(processor, object.arch);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].name, "anydev_fill_pattern16");
    EXPECT_EQ(entries[0].param_sizes, kFourWords);
  }
}

TEST(FillKernelImages, TheSpirvModuleDeclaresTheKernel) {
  const std::span<const unsigned char> spirv = anydev::level_zero::fill_spirv();
  std::vector<core::KernelEntry> entries;
  ASSERT_EQ(core::parse_spirv_entries("test", spirv.data(), spirv.size(), &entries),
            core::Status::success);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, "anydev_fill_pattern16");
  EXPECT_EQ(entries[0].param_sizes, kFourWords);
}

// What is not an image is refused as invalid (and reported: quiet here).
TEST(FillKernelImages, OtherBytesAreRefused) {
  std::vector<core::KernelEntry> entries;
  std::string processor;
  const std::vector<unsigned char> zeros(256, 0);
  EXPECT_EQ(core::parse_amdgpu_code_object("test", zeros.data(), &processor, &entries),
            core::Status::invalid_value);
  EXPECT_EQ(core::parse_spirv_entries("test", zeros.data(), zeros.size(), &entries),
            core::Status::invalid_value);
  const std::span<const unsigned char> spirv = anydev::level_zero::fill_spirv();
  EXPECT_EQ(core::parse_spirv_entries("test", spirv.data(), spirv.size() - 2, &entries),
            core::Status::invalid_value);
  // A code object read as SPIR-V, and SPIR-V read as a code object.
  const anydev::hip::FillCodeObject& object = anydev::hip::fill_code_objects()[0];
  EXPECT_EQ(
      core::parse_spirv_entries("test", object.bytes, object.size & ~std::size_t{3}, &entries),
      core::Status::invalid_value);
  std::vector<unsigned char> padded(spirv.begin(), spirv.end());
  padded.resize(padded.size() + 256, 0);
  EXPECT_EQ(core::parse_amdgpu_code_object("test", padded.data(), &processor, &entries),
            core::Status::invalid_value);
}

}  // namespace

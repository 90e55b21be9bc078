// SPDX-License-Identifier: Apache-2.0
// write_file_replacing (src/support/file_output.h): a new file gets the permissions
// the umask gives, as any new file would, and a file it replaces keeps its
// mode; the content arrives whole.
#include "support/file_output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace anydev::core {
namespace {

class FileOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/anydev-file-output-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    folder_ = pattern;
    saved_umask_ = ::umask(022);
  }
  void TearDown() override {
    ::umask(saved_umask_);
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
  }

  static std::string Write(const std::string& path, const std::string& content) {
    return write_file_replacing(
        path, [&](std::FILE* file) { return std::fputs(content.c_str(), file) >= 0; });
  }
  static unsigned Mode(const std::string& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string folder_;
  mode_t saved_umask_ = 0;
};

TEST_F(FileOutput, NewFileHonoursTheUmask) {
  const std::string path = folder_ + "/new.json";
  ASSERT_EQ(Write(path, "{}"), "");
  EXPECT_EQ(Mode(path), 0644u);
  EXPECT_EQ(Read(path), "{}");
  ::umask(077);
  const std::string private_path = folder_ + "/private.json";
  ASSERT_EQ(Write(private_path, "[]"), "");
  EXPECT_EQ(Mode(private_path), 0600u);
}

TEST_F(FileOutput, ReplacedFileKeepsItsMode) {
  const std::string path = folder_ + "/existing.json";
  std::ofstream(path) << "old";
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_EQ(Write(path, "new"), "");
  EXPECT_EQ(Mode(path), 0640u);
  EXPECT_EQ(Read(path), "new");
}

}  // namespace
}  // namespace anydev::core

// SPDX-License-Identifier: Apache-2.0
// One rule for every ANYDEV_* variable (docs/environment.md, "One rule"): a
// set value its grammar does not accept, the empty value included, is
// refused, never ignored or replaced by the default. What the variable
// configures becomes unavailable with a reason naming the variable and the
// value (escaped): every backend for a core variable, that backend for a
// backend's variable; ANYDEV_BACKEND makes the default selection fail.
//
// Each case runs in a fresh process (the variables are read once): this
// binary runs itself with the variable set and "--child", and the child
// prints what it sees. cuda cases need the CUDA emulator
// (ANYDEV_TEST_CUDA_EMULATOR), hip cases the HIP emulator, level_zero cases
// the emulated Level Zero driver (ANYDEV_TEST_LEVEL_ZERO_EMULATOR, loaded by
// the real loader through ZE_ENABLE_ALT_DRIVERS); without it they are
// skipped, saying so.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "anydev/anydev.hpp"

extern char** environ;

namespace {

// What the child prints: one line per backend, "name|available|reason",
// then "select|<status>|<message>" for DeviceContext().
int RunChild() {
  std::size_t count = 0;
  if (anydev_backend_count(&count) != ANYDEV_SUCCESS) return 2;
  for (std::size_t i = 0; i < count; ++i) {
    anydev_backend_info_t info{};
    info.struct_size = sizeof info;
    if (anydev_backend_info(i, &info) != ANYDEV_SUCCESS) return 2;
    std::string reason = info.reason;
    for (char& c : reason) {
      if (c == '\n') c = ' ';
    }
    std::printf("%s|%d|%s\n", info.name, info.available, reason.c_str());
  }
  try {
    const anydev::DeviceContext ctx;
    std::printf("select|success|%s\n", ctx.api().c_str());
  } catch (const anydev::Error& e) {
    std::string message = e.what();
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    std::printf("select|%s|%s\n", anydev::to_string(e.status()), message.c_str());
  }
  return 0;
}

struct Line {
  std::string name;
  bool available = false;
  std::string reason;
};

// Runs this binary as a child with `variable=value` (plus the emulator for
// cuda) and returns its lines.
std::vector<Line> RunWith(const std::string& variable, const std::string& value) {
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("ANYDEV_", 0) == 0) continue;  // a clean anydev environment
    if (entry.rfind("ZE_ENABLE_ALT_DRIVERS=", 0) == 0) continue;
    entries.push_back(entry);
  }
  entries.push_back("ZE_ENABLE_ALT_DRIVERS=" ANYDEV_TEST_LEVEL_ZERO_EMULATOR);
  if (variable != "ANYDEV_CUDA_LIBRARY") {
    entries.push_back("ANYDEV_CUDA_LIBRARY=" ANYDEV_TEST_CUDA_EMULATOR);
  }
  if (variable != "ANYDEV_HIP_LIBRARY") {
    entries.push_back("ANYDEV_HIP_LIBRARY=" ANYDEV_TEST_HIP_EMULATOR);
  }
  entries.push_back(variable + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe";
  std::string flag = "--child";
  char* argv[] = {self.data(), flag.data(), nullptr};
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  std::string out;
  char chunk[4096];
  for (ssize_t n; (n = read(pipe_fds[0], chunk, sizeof chunk)) > 0;) out.append(chunk, n);
  close(pipe_fds[0]);
  if (spawned != 0) return {};
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  std::vector<Line> lines;
  std::size_t begin = 0;
  while (begin < out.size()) {
    std::size_t end = out.find('\n', begin);
    if (end == std::string::npos) end = out.size();
    const std::string text = out.substr(begin, end - begin);
    const std::size_t a = text.find('|');
    const std::size_t b = text.find('|', a + 1);
    if (a != std::string::npos && b != std::string::npos) {
      Line line;
      line.name = text.substr(0, a);
      const std::string middle = text.substr(a + 1, b - a - 1);
      line.available = middle == "1" || middle == "success";
      line.reason = text.substr(b + 1);
      lines.push_back(line);
    }
    begin = end + 1;
  }
  return lines;
}

const Line* Find(const std::vector<Line>& lines, const std::string& name) {
  for (const Line& line : lines) {
    if (line.name == name) return &line;
  }
  return nullptr;
}

bool HaveEmulator() { return access(ANYDEV_TEST_CUDA_EMULATOR, R_OK) == 0; }
bool HaveHipEmulator() { return access(ANYDEV_TEST_HIP_EMULATOR, R_OK) == 0; }
bool HaveLevelZeroEmulator() { return access(ANYDEV_TEST_LEVEL_ZERO_EMULATOR, R_OK) == 0; }

// Whether `name` is available with no malformed variable (PoCL or the
// emulator may be missing on some machine): only then does its refusal say
// anything.
bool AvailableWithoutVariables(const std::string& name) {
  static const std::vector<Line> baseline = RunWith("ANYDEV_TEST_UNREAD", "1");
  const Line* line = Find(baseline, name);
  return line != nullptr && line->available;
}

// What a malformed value makes unavailable.
enum class Scope { every_backend, cpu, cuda, hip, level_zero, opencl, selection };

struct Case {
  const char* variable;
  const char* value;
  Scope scope;
  const char* shown;  // how the message shows the value (escaped); "" for none
};

// Every variable anydev reads, each with malformed values.
const Case kCases[] = {
    {"ANYDEV_BACKEND", "", Scope::selection, ""},
    {"ANYDEV_BACKEND", "bogus", Scope::selection, "bogus"},
    {"ANYDEV_BACKEND", "cpu,,cuda", Scope::selection, "cpu,,cuda"},
    {"ANYDEV_PLUGIN_PATH", "", Scope::every_backend, "set but empty"},
    {"ANYDEV_LOG_LEVEL", "", Scope::every_backend, "\"\""},
    {"ANYDEV_LOG_LEVEL", "verbose", Scope::every_backend, "\"verbose\""},
    {"ANYDEV_LOG_LEVEL", "WARN", Scope::every_backend, "\"WARN\""},
    {"ANYDEV_LOG_LEVEL", "warn ", Scope::every_backend, "\"warn \""},
    {"ANYDEV_POOL", "", Scope::every_backend, "\"\""},
    {"ANYDEV_POOL", "yes", Scope::every_backend, "\"yes\""},
    {"ANYDEV_POOL", "2", Scope::every_backend, "\"2\""},
    {"ANYDEV_POOL", "\x1b[31m1", Scope::every_backend, "\"\\x1b[31m1\""},
    {"ANYDEV_POOL_CARVE", "", Scope::every_backend, "\"\""},
    {"ANYDEV_POOL_CARVE", "off", Scope::every_backend, "\"off\""},
    {"ANYDEV_POOL_RELEASE_THRESHOLD", "", Scope::every_backend, "\"\""},
    {"ANYDEV_POOL_RELEASE_THRESHOLD", "32M", Scope::every_backend, "\"32M\""},
    {"ANYDEV_POOL_RELEASE_THRESHOLD", "-1", Scope::every_backend, "\"-1\""},
    {"ANYDEV_POOL_RELEASE_THRESHOLD", "99999999999999999999", Scope::every_backend,
     "\"99999999999999999999\""},
    {"ANYDEV_PLUGIN_ALLOW_WRITABLE", "", Scope::every_backend, "\"\""},
    {"ANYDEV_PLUGIN_ALLOW_WRITABLE", "yes", Scope::every_backend, "\"yes\""},
    {"ANYDEV_PLUGIN_ALLOW_WRITABLE", "01", Scope::every_backend, "\"01\""},
    {"ANYDEV_CPU_MLOCK", "", Scope::cpu, "set but empty"},
    {"ANYDEV_CPU_MLOCK", "on", Scope::cpu, "\"on\""},
    {"ANYDEV_CPU_THREADS", "", Scope::cpu, "set but empty"},
    {"ANYDEV_CPU_THREADS", "0", Scope::cpu, "\"0\""},
    {"ANYDEV_CPU_THREADS", "1025", Scope::cpu, "\"1025\""},
    {"ANYDEV_CPU_THREADS", "-1", Scope::cpu, "\"-1\""},
    {"ANYDEV_CPU_STREAMING_BYTES", "", Scope::cpu, "set but empty"},
    {"ANYDEV_CPU_STREAMING_BYTES", "0", Scope::cpu, "\"0\""},
    {"ANYDEV_CPU_STREAMING_BYTES", "64M", Scope::cpu, "\"64M\""},
    {"ANYDEV_CUDA_LIBRARY", "", Scope::cuda, "set but empty"},
    {"ANYDEV_CUDA_MEMORY_POOLS", "", Scope::cuda, "set but empty"},
    {"ANYDEV_CUDA_MEMORY_POOLS", "yes", Scope::cuda, "\"yes\""},
    {"ANYDEV_HIP_LIBRARY", "", Scope::hip, "set but empty"},
    {"ANYDEV_HIP_MEMORY_POOLS", "", Scope::hip, "set but empty"},
    {"ANYDEV_HIP_MEMORY_POOLS", "yes", Scope::hip, "\"yes\""},
    {"ANYDEV_OPENCL_LIBRARY", "", Scope::opencl, "set but empty"},
    {"ANYDEV_LEVEL_ZERO_LIBRARY", "", Scope::level_zero, "set but empty"},
    {"ANYDEV_LEVEL_ZERO_LIBRARY", "/no-such-folder/libze_loader.so.1", Scope::level_zero,
     "/no-such-folder/libze_loader.so.1"},
    {"ANYDEV_VALIDATE", "", Scope::every_backend, "\"\""},
    {"ANYDEV_VALIDATE", "yes", Scope::every_backend, "\"yes\""},
    {"ANYDEV_SYNC", "", Scope::every_backend, "\"\""},
    {"ANYDEV_SYNC", "2", Scope::every_backend, "\"2\""},
    {"ANYDEV_FAULT", "", Scope::every_backend, "set but empty"},
    {"ANYDEV_FAULT", "copy:0", Scope::every_backend, "\"copy:0\""},
    {"ANYDEV_TRACE", "", Scope::every_backend, "set but empty"},
    {"ANYDEV_TRACE", "/tmp/", Scope::every_backend, "\"/tmp/\""},
};

// The case as test output shows it (a control character as \xHH).
void PrintTo(const Case& c, std::ostream* out) {
  *out << c.variable << "=\"";
  for (const char* p = c.value; *p != '\0'; ++p) {
    const auto u = static_cast<unsigned char>(*p);
    if (u < 0x20 || u == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      *out << hex;
    } else {
      *out << *p;
    }
  }
  *out << "\"";
}

class EnvRule : public ::testing::TestWithParam<Case> {};

TEST_P(EnvRule, AMalformedValueIsRefusedNamingTheVariable) {
  const Case c = GetParam();
  if (c.scope == Scope::cuda && !HaveEmulator()) {
    GTEST_SKIP() << "the CUDA emulator " << ANYDEV_TEST_CUDA_EMULATOR << " is not built";
  }
  if (c.scope == Scope::hip && !HaveHipEmulator()) {
    GTEST_SKIP() << "the HIP emulator " << ANYDEV_TEST_HIP_EMULATOR << " is not built";
  }
  if (c.scope == Scope::level_zero && !HaveLevelZeroEmulator()) {
    GTEST_SKIP() << "the emulated Level Zero driver " << ANYDEV_TEST_LEVEL_ZERO_EMULATOR
                 << " is not built";
  }
  if (c.scope == Scope::level_zero && !AvailableWithoutVariables("level_zero")) {
    GTEST_SKIP() << "level_zero is unavailable here even without " << c.variable
                 << " (no Level Zero loader?)";
  }
  if (c.scope == Scope::opencl && !AvailableWithoutVariables("opencl")) {
    GTEST_SKIP() << "opencl is unavailable here even without " << c.variable;
  }
  const std::vector<Line> lines = RunWith(c.variable, c.value);
  ASSERT_FALSE(lines.empty()) << "the child process failed";
  const auto refused = [&](const std::string& name) {
    const Line* line = Find(lines, name);
    ASSERT_NE(line, nullptr) << name << " is not listed";
    EXPECT_FALSE(line->available) << name << " is available although " << c.variable << "=\""
                                  << c.value << "\"";
    EXPECT_NE(line->reason.find(c.variable), std::string::npos)
        << name << "'s reason does not name " << c.variable << ": " << line->reason;
    EXPECT_NE(line->reason.find(c.shown), std::string::npos)
        << name << "'s reason does not show the value as " << c.shown << ": " << line->reason;
    EXPECT_EQ(line->reason.find('\x1b'), std::string::npos) << "a raw escape: " << line->reason;
  };
  const auto works = [&](const std::string& name) {
    const Line* line = Find(lines, name);
    ASSERT_NE(line, nullptr) << name << " is not listed";
    EXPECT_TRUE(line->available) << name << " is unavailable: " << line->reason;
  };
  switch (c.scope) {
    case Scope::every_backend:
      refused("cpu");
      for (const char* name : {"opencl", "cuda", "hip", "level_zero"}) {
        if (AvailableWithoutVariables(name)) refused(name);
      }
      break;
    case Scope::cpu:
      refused("cpu");
      break;
    case Scope::cuda:
      refused("cuda");
      works("cpu");
      break;
    case Scope::hip:
      refused("hip");
      works("cpu");
      break;
    case Scope::level_zero:
      refused("level_zero");
      works("cpu");
      break;
    case Scope::opencl:
      refused("opencl");
      works("cpu");
      break;
    case Scope::selection: {
      const Line* select = Find(lines, "select");
      ASSERT_NE(select, nullptr);
      EXPECT_FALSE(select->available) << "DeviceContext() chose " << select->reason;
      EXPECT_NE(select->reason.find(c.variable), std::string::npos) << select->reason;
      EXPECT_NE(select->reason.find(c.shown), std::string::npos) << select->reason;
      break;
    }
  }
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string name = std::string(info.param.variable).substr(7) + "_" + std::to_string(info.index);
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryVariable, EnvRule, ::testing::ValuesIn(kCases), CaseName);

// ANYDEV_LOG_LEVEL also takes spdlog's own names.
TEST(EnvRuleLogLevel, SpdlogNamesAreAccepted) {
  for (const char* value : {"warning", "err", "warn", "error", "off", "trace"}) {
    const std::vector<Line> lines = RunWith("ANYDEV_LOG_LEVEL", value);
    const Line* cpu = Find(lines, "cpu");
    ASSERT_NE(cpu, nullptr) << value;
    EXPECT_TRUE(cpu->available) << "ANYDEV_LOG_LEVEL=" << value << ": " << cpu->reason;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--child") == 0) return RunChild();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

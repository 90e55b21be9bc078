// SPDX-License-Identifier: Apache-2.0
// Which plugins anydev trusts (docs/environment.md, ANYDEV_PLUGIN_PATH and
// ANYDEV_PLUGIN_ALLOW_WRITABLE; "Secure mode"). Each case runs
// anydev-plugin-probe (plugin_probe.cpp) in a fresh process with the
// environment it needs, because the registry reads its variables once:
//
// - a plugin whose file or folder others may write to (0777, 1777, 0775
//   folders; a 0666 file) is refused with a reason naming it, unless
//   ANYDEV_PLUGIN_ALLOW_WRITABLE=1;
// - in secure mode (AT_SECURE: a set-user-ID program) ANYDEV_PLUGIN_PATH,
//   ANYDEV_TRACE, ANYDEV_LOG_LEVEL and the backends' variables are ignored.
//   The test makes a set-user-ID copy of the probe owned by nobody and runs
//   it as root (euid != ruid sets AT_SECURE); it is skipped, saying why, when
//   not run as root or where set-user-ID programs do not work.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

const std::string kProbe = ANYDEV_TEST_PLUGIN_PROBE;
const std::string kTestgood = ANYDEV_TEST_TESTGOOD_PLUGIN;  // a valid plugin file
const std::string kScratch = ANYDEV_TEST_SCRATCH_DIR;
constexpr uid_t kNobody = 65534;

struct Backend {
  bool available = false;
  std::string reason;
};

// What one probe run printed.
struct ProbeRun {
  int exit_status = -1;
  std::string output;
  unsigned long at_secure = 0;
  std::map<std::string, Backend> backends;
  std::string used;

  std::optional<Backend> backend(const std::string& name) const {
    const auto it = backends.find(name);
    if (it == backends.end()) return std::nullopt;
    return it->second;
  }
};

// Runs `program` with `args` and the parent's environment minus every
// ANYDEV_* variable, plus `env` ("NAME=value").
ProbeRun RunProbe(const std::string& program, const std::vector<std::string>& args,
                  const std::vector<std::string>& env) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "ANYDEV_", 7) != 0) environment.emplace_back(*e);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  ProbeRun run;
  int fds[2];
  if (pipe(fds) != 0) return run;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    run.output = "posix_spawn failed: " + std::string(std::strerror(spawned));
    return run;
  }
  char chunk[4096];
  ssize_t got = 0;
  while ((got = read(fds[0], chunk, sizeof chunk)) > 0) run.output.append(chunk, got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::size_t begin = 0;
  while (begin < run.output.size()) {
    std::size_t end = run.output.find('\n', begin);
    if (end == std::string::npos) end = run.output.size();
    const std::string line = run.output.substr(begin, end - begin);
    begin = end + 1;
    if (line.starts_with("at_secure=")) {
      run.at_secure = std::stoul(line.substr(10));
    } else if (line.starts_with("used=")) {
      run.used = line.substr(5);
    } else if (line.starts_with("backend=")) {
      const std::size_t bar1 = line.find('|');
      const std::size_t bar2 = line.find('|', bar1 + 1);
      if (bar1 == std::string::npos || bar2 == std::string::npos) continue;
      run.backends[line.substr(8, bar1 - 8)] = {line.substr(bar1 + 1, bar2 - bar1 - 1) == "1",
                                                line.substr(bar2 + 1)};
    }
  }
  return run;
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

class PluginTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(kScratch) / ("run-" + std::to_string(getpid()) + "-" +
                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::error_code ignored;
    fs::remove_all(base_, ignored);
    fs::create_directories(base_);
    ASSERT_EQ(chmod(base_.c_str(), 0755), 0) << base_;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(base_, ignored);
  }

  // A folder `name` of mode `folder_mode` holding a copy of testgood's plugin
  // of mode `file_mode` (chmod: the umask does not apply).
  std::string PluginFolder(const std::string& name, mode_t folder_mode, mode_t file_mode) {
    const fs::path folder = base_ / name;
    fs::create_directories(folder);
    const fs::path file = folder / "libanydev-backend-testgood.so";
    fs::copy_file(kTestgood, file, fs::copy_options::overwrite_existing);
    EXPECT_EQ(chmod(file.c_str(), file_mode), 0) << file;
    EXPECT_EQ(chmod(folder.c_str(), folder_mode), 0) << folder;
    return folder.string();
  }

  // testgood as the probe sees it with `folder` as the plugin path.
  Backend Testgood(const std::string& folder, std::vector<std::string> env = {}) {
    env.push_back("ANYDEV_PLUGIN_PATH=" + folder);
    const ProbeRun run = RunProbe(kProbe, {}, env);
    EXPECT_EQ(run.exit_status, 0) << run.output;
    const std::optional<Backend> testgood = run.backend("testgood");
    EXPECT_TRUE(testgood.has_value()) << "testgood is not listed:\n" << run.output;
    return testgood.value_or(Backend{});
  }

  fs::path base_;
};

TEST_F(PluginTrust, PluginInAFolderOnlyItsOwnerMayWriteLoads) {
  const Backend testgood = Testgood(PluginFolder("safe", 0755, 0755));
  EXPECT_TRUE(testgood.available) << testgood.reason;
}

TEST_F(PluginTrust, WorldWritableFolderIsRefusedNamingIt) {
  const std::string folder = PluginFolder("world", 0777, 0755);
  const Backend testgood = Testgood(folder);
  EXPECT_FALSE(testgood.available);
  EXPECT_TRUE(Contains(testgood.reason, "plugin folder " + folder +
                                            " is writable by its group and others (mode 0777)"));
  EXPECT_TRUE(Contains(testgood.reason, "ANYDEV_PLUGIN_ALLOW_WRITABLE=1"));
}

// The sticky bit (as on /tmp) keeps others from replacing this file, not from
// adding plugins of new names, which anydev-info opens: refused too.
TEST_F(PluginTrust, StickyWorldWritableFolderIsRefused) {
  const std::string folder = PluginFolder("sticky", 01777, 0755);
  const Backend testgood = Testgood(folder);
  EXPECT_FALSE(testgood.available);
  EXPECT_TRUE(Contains(testgood.reason, "plugin folder " + folder +
                                            " is writable by its group and others (mode 1777)"));
}

TEST_F(PluginTrust, GroupWritableFolderIsRefused) {
  const std::string folder = PluginFolder("group", 0775, 0755);
  const Backend testgood = Testgood(folder);
  EXPECT_FALSE(testgood.available);
  EXPECT_TRUE(Contains(testgood.reason,
                       "plugin folder " + folder + " is writable by its group (mode 0775)"));
}

TEST_F(PluginTrust, WritablePluginFileIsRefusedNamingIt) {
  const std::string folder = PluginFolder("file", 0755, 0666);
  const Backend testgood = Testgood(folder);
  EXPECT_FALSE(testgood.available);
  EXPECT_TRUE(Contains(testgood.reason, "plugin " + folder +
                                            "/libanydev-backend-testgood.so is writable by "
                                            "its group and others (mode 0666)"));
}

TEST_F(PluginTrust, WritableFolderLoadsWhenAllowed) {
  const std::string folder = PluginFolder("allowed", 0777, 0666);
  const Backend allowed = Testgood(folder, {"ANYDEV_PLUGIN_ALLOW_WRITABLE=1"});
  EXPECT_TRUE(allowed.available) << allowed.reason;
  const Backend refused = Testgood(folder, {"ANYDEV_PLUGIN_ALLOW_WRITABLE=0"});
  EXPECT_FALSE(refused.available);
  EXPECT_TRUE(Contains(refused.reason, "is writable by"));
}

// In secure mode the caller's environment cannot choose code or files: a
// set-user-ID copy of the probe (owned by nobody, run by root) must ignore
// ANYDEV_PLUGIN_PATH, ANYDEV_TRACE, ANYDEV_LOG_LEVEL and the cpu backend's
// ANYDEV_CPU_THREADS; the same probe run plainly honours each (the controls).
TEST_F(PluginTrust, SecureModeIgnoresTheEnvironment) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to make a set-user-ID copy of the probe owned by nobody "
                    "(euid is "
                 << geteuid() << ")";
  }
  struct statvfs filesystem {};
  ASSERT_EQ(statvfs(base_.c_str(), &filesystem), 0);
  if ((filesystem.f_flag & ST_NOSUID) != 0) {
    GTEST_SKIP() << base_ << " is on a file system mounted nosuid: set-user-ID has no effect";
  }
  const fs::path secure_dir = base_ / "secure";
  fs::create_directories(secure_dir);
  ASSERT_EQ(chmod(secure_dir.c_str(), 0755), 0);
  const fs::path setuid_probe = secure_dir / "anydev-plugin-probe";
  fs::copy_file(kProbe, setuid_probe);
  ASSERT_EQ(chown(setuid_probe.c_str(), kNobody, kNobody), 0) << std::strerror(errno);
  ASSERT_EQ(chmod(setuid_probe.c_str(), 04755), 0) << std::strerror(errno);
  // A folder nobody may write to: ignoring ANYDEV_TRACE is what keeps the
  // file away, not a permission.
  const fs::path trace_dir = base_ / "trace";
  fs::create_directories(trace_dir);
  ASSERT_EQ(chmod(trace_dir.c_str(), 0777), 0);
  const std::string plugins = fs::path(kTestgood).parent_path().string();
  const std::string secure_trace = (trace_dir / "secure.json").string();

  const ProbeRun secure = RunProbe(setuid_probe.string(), {"--use", "testgood", "cpu"},
                                   {"ANYDEV_PLUGIN_PATH=" + plugins, "ANYDEV_TRACE=" + secure_trace,
                                    "ANYDEV_LOG_LEVEL=bogus", "ANYDEV_CPU_THREADS=bogus"});
  if (secure.exit_status == 126 || secure.exit_status == 127 ||
      secure.output.starts_with("posix_spawn failed")) {
    GTEST_SKIP() << "the set-user-ID probe " << setuid_probe
                 << " cannot run as nobody here (a folder above it closed to others?): "
                 << secure.output;
  }
  ASSERT_EQ(secure.exit_status, 0) << secure.output;
  if (secure.at_secure == 0) {
    GTEST_SKIP() << "the set-user-ID probe did not run in secure mode (AT_SECURE 0; no_new_privs "
                    "or a container that ignores set-user-ID): "
                 << secure.output;
  }
  EXPECT_FALSE(secure.backend("testgood").has_value())
      << "ANYDEV_PLUGIN_PATH was honoured in secure mode:\n"
      << secure.output;
  const std::optional<Backend> cpu = secure.backend("cpu");
  ASSERT_TRUE(cpu.has_value()) << secure.output;
  EXPECT_TRUE(cpu->available) << "ANYDEV_LOG_LEVEL or ANYDEV_CPU_THREADS was honoured in secure "
                                 "mode: "
                              << cpu->reason;
  EXPECT_EQ(secure.used, "cpu") << secure.output;
  EXPECT_FALSE(fs::exists(secure_trace)) << "ANYDEV_TRACE was honoured in secure mode";

  // The controls: the same probe, not set-user-ID, honours each variable.
  const std::string plain_trace = (trace_dir / "plain.json").string();
  const ProbeRun plain = RunProbe(kProbe, {"--use", "testgood", "cpu"},
                                  {"ANYDEV_PLUGIN_PATH=" + plugins, "ANYDEV_TRACE=" + plain_trace});
  EXPECT_EQ(plain.at_secure, 0u);
  ASSERT_TRUE(plain.backend("testgood").has_value()) << plain.output;
  EXPECT_TRUE(plain.backend("testgood")->available) << plain.output;
  EXPECT_EQ(plain.used, "testgood") << plain.output;
  EXPECT_TRUE(fs::exists(plain_trace)) << plain.output;
  for (const char* variable : {"ANYDEV_LOG_LEVEL", "ANYDEV_CPU_THREADS"}) {
    const ProbeRun bogus = RunProbe(kProbe, {}, {std::string(variable) + "=bogus"});
    ASSERT_TRUE(bogus.backend("cpu").has_value()) << bogus.output;
    EXPECT_FALSE(bogus.backend("cpu")->available) << variable;
    EXPECT_TRUE(Contains(bogus.backend("cpu")->reason, variable));
  }
}

}  // namespace

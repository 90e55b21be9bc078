// The environment variables anydev reads, in one place, so that anydev-info
// and docs/environment.md can list them. Reads are thread-safe as long as
// nobody calls setenv concurrently (the usual POSIX caveat).
#ifndef ANYDEV_SRC_ENVIRONMENT_H_
#define ANYDEV_SRC_ENVIRONMENT_H_

#include <optional>
#include <string>

namespace anydev::core {

inline constexpr const char* kEnvBackend = "ANYDEV_BACKEND";
inline constexpr const char* kEnvPluginPath = "ANYDEV_PLUGIN_PATH";
inline constexpr const char* kEnvLogLevel = "ANYDEV_LOG_LEVEL";
inline constexpr const char* kEnvPool = "ANYDEV_POOL";  // pool/pool_registry.h

// The variable's value, or nullopt when unset.
std::optional<std::string> env(const char* name);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_ENVIRONMENT_H_

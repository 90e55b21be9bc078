// SPDX-License-Identifier: Apache-2.0
// Writing a file that anydev produces (the ANYDEV_TRACE JSON, anydev-bench
// --plot) without trusting the folder it lands in. The content goes to a
// fresh temporary file created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, so a
// symlink or file planted at any name is never followed or overwritten) in
// the same folder, then renamed over `path` (rename replaces a symlink at
// `path` itself, not its target). Readers never see a half-written file. A
// new file gets the permissions any new file gets there (0666 less the
// umask, or the folder's default ACL); a regular file replaced keeps its
// mode.
//
// Stateless and thread-safe (two concurrent writes of one path: the last
// rename wins, each file is whole).
#ifndef ANYDEV_SRC_SUPPORT_FILE_OUTPUT_H_
#define ANYDEV_SRC_SUPPORT_FILE_OUTPUT_H_

#include <cstdio>
#include <functional>
#include <string>

namespace anydev::core {

// `write` fills the open file and returns false on failure. Returns an empty
// string on success, else why nothing was written (naming the path and the
// system's reason); on failure the temporary file is removed and `path` is
// unchanged.
std::string write_file_replacing(const std::string& path,
                                 const std::function<bool(std::FILE*)>& write);

}  // namespace anydev::core

#endif  // ANYDEV_SRC_SUPPORT_FILE_OUTPUT_H_

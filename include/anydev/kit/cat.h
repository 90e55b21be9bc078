// SPDX-License-Identifier: Apache-2.0
// kit::cat: the one message-building helper of the backends (and the core).
// Stateless, thread-safe; the returned string is the caller's.
#ifndef ANYDEV_KIT_CAT_H_
#define ANYDEV_KIT_CAT_H_

#include <sstream>
#include <string>
#include <utility>

namespace anydev::kit {

// Concatenates anything printable with operator<< (error paths only: it
// builds an ostringstream).
template <class... Parts>
std::string cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

}  // namespace anydev::kit

#endif  // ANYDEV_KIT_CAT_H_

// SPDX-License-Identifier: Apache-2.0
// Caller structs that start with `struct_size` (anydev_bk_device_props_t, the
// core's anydev_core_services_t, ...): a field is read or written only when
// the caller's struct is long enough to hold it, so that an older caller's
// shorter struct is never overrun. Stateless, thread-safe.
#ifndef ANYDEV_KIT_STRUCTS_H_
#define ANYDEV_KIT_STRUCTS_H_

#include <cstddef>
#include <cstring>
#include <string>

namespace anydev::kit {

// True when `*s`, of s->struct_size bytes, holds the whole of `member`.
// Only the address of the member is computed: nothing past struct_size is read.
template <class Struct, class Field>
bool has_field(const Struct* s, Field Struct::*member) {
  if (s == nullptr) return false;
  const std::size_t end = static_cast<std::size_t>(reinterpret_cast<const char*>(&(s->*member)) -
                                                   reinterpret_cast<const char*>(s)) +
                          sizeof(Field);
  return end <= static_cast<std::size_t>(s->struct_size);
}

// The field's value when the struct holds it, else `fallback`.
template <class Struct, class Field>
Field field_or(const Struct* s, Field Struct::*member, Field fallback) {
  return has_field(s, member) ? s->*member : fallback;
}

// Copies `text` into a fixed char array, cut to fit and always terminated.
template <std::size_t N>
void copy_text(char (&dst)[N], const std::string& text) {
  const std::size_t length = text.size() < N - 1 ? text.size() : N - 1;
  std::memcpy(dst, text.data(), length);
  dst[length] = '\0';
}

}  // namespace anydev::kit

#endif  // ANYDEV_KIT_STRUCTS_H_

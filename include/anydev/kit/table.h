// SPDX-License-Identifier: Apache-2.0
// The backend table as every backend fills it: the entries the core requires
// and the optional ones, picked from the one entry list (ANYDEV_BACKEND_ENTRIES,
// include/anydev/backend_entries.h; the core's plugin loader checks the same
// list), each entry's function declared from the table's own field type
// without the instance, and the table's header fields. Compile-time only:
// nothing here holds state.
//
// A backend's entries may leave out the instance (`void* instance`, the first
// parameter of every table entry): kit::entry<f> is f itself when f takes the
// instance first, else a generated thunk that drops the instance and calls f
// (with optimisation a jump to f, or f inlined). The table builder adapts
// every required entry this way; optional entries are given as kit::entry<f>.
//
//   ANYDEV_KIT_REQUIRED_ENTRIES(X)       X(name) for each required entry
//   ANYDEV_KIT_DECLARE_ENTRY(name)       declares `name` with the type of the
//                                        table's field `name`, less the
//                                        instance
//   ANYDEV_KIT_DECLARE_REQUIRED_ENTRIES  ANYDEV_KIT_DECLARE_ENTRY for each one
//   ANYDEV_KIT_SET_REQUIRED_ENTRIES(t)   t.name = kit::entry<name> for each one
//                                        (the overload of `name` without the
//                                        instance)
//   ANYDEV_KIT_OPTIONAL_ENTRIES(X)       X(name) for each optional entry
//   ANYDEV_KIT_DECLARE_ALL_ENTRIES       declares every entry, required and
//                                        optional (a backend defines those it
//                                        fills; the others stay undefined)
//   ANYDEV_KIT_BACKEND_TABLE(name, ...)  the whole table: header, required
//                                        entries, then the instance, the
//                                        optional entries and flags given as
//                                        designated initializers of
//                                        kit::optional_entries
//
//   constexpr anydev_backend_table_t kTable = ANYDEV_KIT_BACKEND_TABLE(
//       kBackendName, .native_handle = kit::entry<native_handle>, .flags = 0);
//
// The functions named are looked up where the macro is used: a backend
// defines them in its own namespace. A backend that wants its instance in an
// optional entry writes it taking `void* instance` first (kit::entry<f> is
// then f itself); in a required entry, it sets that field of the built table
// itself. It passes `.instance = &its_state`. tests/plugins/fake_backend.c is
// a backend in C that takes the instance in every entry.
#ifndef ANYDEV_KIT_TABLE_H_
#define ANYDEV_KIT_TABLE_H_

#include <type_traits>

#include "anydev/anydev.h"
#include "anydev/backend.h"

// The required and the optional entries of ANYDEV_BACKEND_ENTRIES (the one
// list, include/anydev/backend_entries.h), each as X(name).
#define ANYDEV_KIT_PICK_REQUIRED_(X, need, name, params) ANYDEV_KIT_PICK_REQUIRED_##need(X, name)
#define ANYDEV_KIT_PICK_REQUIRED_REQUIRED(X, name) X(name)
#define ANYDEV_KIT_PICK_REQUIRED_OPTIONAL(X, name)
#define ANYDEV_KIT_PICK_OPTIONAL_(X, need, name, params) ANYDEV_KIT_PICK_OPTIONAL_##need(X, name)
#define ANYDEV_KIT_PICK_OPTIONAL_REQUIRED(X, name)
#define ANYDEV_KIT_PICK_OPTIONAL_OPTIONAL(X, name) X(name)
#define ANYDEV_KIT_REQUIRED_ENTRIES(X) ANYDEV_BACKEND_ENTRIES(ANYDEV_KIT_PICK_REQUIRED_, X)
#define ANYDEV_KIT_OPTIONAL_ENTRIES(X) ANYDEV_BACKEND_ENTRIES(ANYDEV_KIT_PICK_OPTIONAL_, X)

#define ANYDEV_KIT_DECLARE_ENTRY(name) \
  ::anydev::kit::without_instance_t<decltype(anydev_backend_table_t::name)> name;
#define ANYDEV_KIT_DECLARE_REQUIRED_ENTRIES ANYDEV_KIT_REQUIRED_ENTRIES(ANYDEV_KIT_DECLARE_ENTRY)

#define ANYDEV_KIT_DECLARE_ALL_ENTRIES \
  ANYDEV_KIT_DECLARE_REQUIRED_ENTRIES  \
  ANYDEV_KIT_OPTIONAL_ENTRIES(ANYDEV_KIT_DECLARE_ENTRY)

// The instance-less overload of `name` (a backend may have other functions of
// that name, e.g. opencl's int device_count()), adapted.
#define ANYDEV_KIT_SET_ENTRY_(name)                   \
  kit_table_.name = ::anydev::kit::entry<static_cast< \
      ::anydev::kit::without_instance_t<decltype(anydev_backend_table_t::name)>*>(name)>;
#define ANYDEV_KIT_SET_REQUIRED_ENTRIES(table)         \
  do {                                                 \
    anydev_backend_table_t& kit_table_ = (table);      \
    ANYDEV_KIT_REQUIRED_ENTRIES(ANYDEV_KIT_SET_ENTRY_) \
  } while (false)

namespace anydev::kit {

// An entry's function type without the instance: for the table field type
// anydev_status_t (*)(void*, A...), the function type anydev_status_t(A...).
template <class Field>
struct without_instance;
template <class... Args>
struct without_instance<anydev_status_t (*)(void*, Args...)> {
  using type = anydev_status_t(Args...);
};
template <class Field>
using without_instance_t = typename without_instance<Field>::type;

// The thunk for a function F that takes no instance: drops the instance and
// calls F with the rest.
template <class Fn>
struct instance_dropper;
template <class... Args>
struct instance_dropper<anydev_status_t (*)(Args...)> {
  template <anydev_status_t (*F)(Args...)>
  static anydev_status_t call(void* /*instance*/, Args... args) {
    return F(args...);
  }
};

// Whether the function type Fn takes the instance first.
template <class Fn>
inline constexpr bool takes_instance = false;
template <class... Args>
inline constexpr bool takes_instance<anydev_status_t (*)(void*, Args...)> = true;

// F as a table entry: F itself when it takes the instance, else its thunk.
template <auto F>
constexpr auto adapt_entry() {
  if constexpr (takes_instance<decltype(F)>) {
    return F;
  } else {
    return &instance_dropper<decltype(F)>::template call<F>;
  }
}
template <auto F>
inline constexpr auto entry = adapt_entry<F>();

// A table with only its header filled: size, ABI version and `name` (a
// string that lives as long as the table).
constexpr anydev_backend_table_t table_header(const char* name) {
  anydev_backend_table_t table{};
  table.struct_size = sizeof(anydev_backend_table_t);
  table.abi_version = ANYDEV_BACKEND_ABI_VERSION;
  table.name = name;
  return table;
}

// The instance, the optional entries (null: not offered; each given as
// kit::entry<f>) and the flags of a table.
struct optional_entries {
  void* instance = nullptr;
#define ANYDEV_KIT_OPTIONAL_FIELD_(name) decltype(anydev_backend_table_t::name) name = nullptr;
  ANYDEV_KIT_OPTIONAL_ENTRIES(ANYDEV_KIT_OPTIONAL_FIELD_)
#undef ANYDEV_KIT_OPTIONAL_FIELD_
  decltype(anydev_backend_table_t::flags) flags = 0;
};

// `table` with the instance, the optional entries and the flags of
// `optional`.
constexpr anydev_backend_table_t with_optional_entries(anydev_backend_table_t table,
                                                       const optional_entries& optional) {
  table.instance = optional.instance;
#define ANYDEV_KIT_COPY_OPTIONAL_(name) table.name = optional.name;
  ANYDEV_KIT_OPTIONAL_ENTRIES(ANYDEV_KIT_COPY_OPTIONAL_)
#undef ANYDEV_KIT_COPY_OPTIONAL_
  table.flags = optional.flags;
  return table;
}

// Whether native_handle's `kind` names an object (a stream, an event or a
// memory handle) that the caller must pass.
constexpr bool native_kind_needs_object(int kind) {
  return kind == ANYDEV_NATIVE_STREAM || kind == ANYDEV_NATIVE_EVENT ||
         kind == ANYDEV_NATIVE_MEMORY;
}

}  // namespace anydev::kit

#define ANYDEV_KIT_BACKEND_TABLE(backend_name, ...)                                   \
  ::anydev::kit::with_optional_entries(                                               \
      [] {                                                                            \
        anydev_backend_table_t kit_table = ::anydev::kit::table_header(backend_name); \
        ANYDEV_KIT_SET_REQUIRED_ENTRIES(kit_table);                                   \
        return kit_table;                                                             \
      }(),                                                                            \
      ::anydev::kit::optional_entries{__VA_ARGS__})

#endif  // ANYDEV_KIT_TABLE_H_

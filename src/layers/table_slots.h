// Slots that let a layer wrap a backend's function table.
//
// A backend table holds plain C function pointers with no user-data
// argument, so a wrapper cannot be told which inner table to forward to.
// Instead each layer is a class template Wrap<S>, instantiated for slots
// S = 0..kMaxWrappedBackends-1; Wrap<S>::inner is the table wrapped in slot
// S, and a copy of that table is pointed at the entries Wrap<S> declares,
// found by name from the one entry list (install_layer_entries). (Level Zero's and Unified
// Runtime's loaders keep one dispatch table per layer and driver in the same way.)
//
// Thread safety: wrap() is called under the registry lock while a backend is
// probed; the tables it returns are immutable and live for the process, and
// reach other threads through the registry (which publishes them under its
// lock).
#ifndef ANYDEV_SRC_LAYERS_TABLE_SLOTS_H_
#define ANYDEV_SRC_LAYERS_TABLE_SLOTS_H_

#include <array>
#include <cstddef>
#include <utility>

#include "anydev/backend.h"

namespace anydev::core::layers {

inline constexpr std::size_t kMaxWrappedBackends = 16;

// Points `table` (a copy of *inner) at each entry of the one entry list
// (ANYDEV_BACKEND_ENTRIES) that the layer W declares as a static member
// function of that name, when *inner has that entry (an optional entry the
// backend left NULL stays NULL). Every other entry passes through unchanged.
template <class W>
void install_layer_entries(anydev_backend_table_t* table, const anydev_backend_table_t* inner) {
#define ANYDEV_LAYER_INSTALL_ENTRY_(unused, need, name, params) \
  if constexpr (requires { &W::name; }) {                       \
    if (inner->name != nullptr) table->name = &W::name;         \
  }
  ANYDEV_BACKEND_ENTRIES(ANYDEV_LAYER_INSTALL_ENTRY_, ~)
#undef ANYDEV_LAYER_INSTALL_ENTRY_
}

// Wrap<S> has `static inline const anydev_backend_table_t* inner` (the table
// it forwards to) and, for each entry the layer intercepts, a static member
// function named after the entry (install_layer_entries finds them).
template <template <std::size_t> class Wrap>
class SlotTables {
 public:
  // A new table wrapping `inner`, or nullptr when every slot is used.
  const anydev_backend_table_t* wrap(const anydev_backend_table_t* inner) {
    if (next_ >= kMaxWrappedBackends) return nullptr;
    auto* table = new anydev_backend_table_t(*inner);  // lives for the process
    table->struct_size = sizeof(anydev_backend_table_t);
    installers()[next_++](table, inner);
    return table;
  }

 private:
  using Installer = void (*)(anydev_backend_table_t*, const anydev_backend_table_t*);
  template <std::size_t S>
  static void install(anydev_backend_table_t* table, const anydev_backend_table_t* inner) {
    Wrap<S>::inner = inner;
    install_layer_entries<Wrap<S>>(table, inner);
  }
  template <std::size_t... I>
  static constexpr std::array<Installer, sizeof...(I)> make(std::index_sequence<I...>) {
    return {&install<I>...};
  }
  static constexpr std::array<Installer, kMaxWrappedBackends> installers() {
    return make(std::make_index_sequence<kMaxWrappedBackends>());
  }

  std::size_t next_ = 0;
};

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_TABLE_SLOTS_H_

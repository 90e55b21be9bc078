// Slots that let a layer wrap a backend's function table.
//
// A backend table holds plain C function pointers with no user-data
// argument, so a wrapper cannot be told which inner table to forward to.
// Instead each layer is a class template Wrap<S>, instantiated for slots
// S = 0..kMaxWrappedBackends-1; Wrap<S>::inner is the table wrapped in slot
// S, and Wrap<S>::install points a copy of that table at Wrap<S>'s entries.
// (Level Zero's and Unified Runtime's loaders keep one dispatch table per
// layer and driver in the same way.)
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

// Wrap<S> provides `static void install(anydev_backend_table_t* table,
// const anydev_backend_table_t* inner)`, which records `inner` and overrides
// the entries the layer intercepts in `table` (a copy of *inner).
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
  template <std::size_t... I>
  static constexpr std::array<Installer, sizeof...(I)> make(std::index_sequence<I...>) {
    return {&Wrap<I>::install...};
  }
  static constexpr std::array<Installer, kMaxWrappedBackends> installers() {
    return make(std::make_index_sequence<kMaxWrappedBackends>());
  }

  std::size_t next_ = 0;
};

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_TABLE_SLOTS_H_

// SPDX-License-Identifier: Apache-2.0
// How a layer wraps a backend's table: wrap_table<Layer>(inner) makes a new
// table whose `instance` is a LayerInstance naming `inner`, and whose every
// entry is either the layer's own function of that name (a static member of
// Layer taking `void* instance` first, found by name from the one entry list,
// ANYDEV_BACKEND_ENTRIES) or a pass-through generated from the entry list
// that calls inner->name(inner->instance, ...). An optional entry the inner
// table leaves NULL stays NULL. Any number of tables can be wrapped: the
// layer's functions are shared and tell the tables apart by their instance.
// (Level Zero's and Unified Runtime's loaders chain dispatch tables per layer
// and driver in a similar way.)
//
// Ownership and thread safety: wrap_table is called under the registry lock
// while a backend is probed; the table and its LayerInstance it makes are
// immutable and live for the process (never freed), and reach other threads
// through the registry, which publishes them under its lock.
#ifndef ANYDEV_SRC_LAYERS_LAYER_TABLE_H_
#define ANYDEV_SRC_LAYERS_LAYER_TABLE_H_

#include "anydev/backend.h"
#include "support/backend_calls.h"

namespace anydev::core::layers {

// What a wrapped table's `instance` points to: the table it wraps. A layer
// that needs more per-table state would add it here. Immutable.
struct LayerInstance {
  const anydev_backend_table_t* inner;
};

// The table that the wrapped table whose instance is `instance` wraps.
inline const anydev_backend_table_t* inner_of(void* instance) {
  return static_cast<const LayerInstance*>(instance)->inner;
}

// The pass-through for entry Field of a table whose field type is Fn.
template <class Fn>
struct PassThrough;
template <class... Args>
struct PassThrough<anydev_status_t (*)(void*, Args...)> {
  template <anydev_status_t (*anydev_backend_table_t::*Field)(void*, Args...)>
  static anydev_status_t call(void* instance, Args... args) {
    const anydev_backend_table_t* inner = inner_of(instance);
    return (inner->*Field)(inner->instance, args...);
  }
};

// A new table wrapping `inner` with the entries of Layer (see above). Never
// fails short of std::bad_alloc.
template <class Layer>
const anydev_backend_table_t* wrap_table(const anydev_backend_table_t* inner) {
  struct Wrapped {
    anydev_backend_table_t table;
    LayerInstance state;
  };
  auto* wrapped = new Wrapped{*inner, LayerInstance{inner}};  // lives for the process
  anydev_backend_table_t* table = &wrapped->table;
  table->struct_size = sizeof(anydev_backend_table_t);
  table->instance = &wrapped->state;
#define ANYDEV_LAYER_ENTRY_(unused, need, name, params)                                \
  if constexpr (requires { &Layer::name; }) {                                          \
    table->name = &Layer::name;                                                        \
  } else {                                                                             \
    table->name = &PassThrough<decltype(anydev_backend_table_t::name)>::template call< \
        &anydev_backend_table_t::name>;                                                \
  }                                                                                    \
  if (inner->name == nullptr) table->name = nullptr;
  ANYDEV_BACKEND_ENTRIES(ANYDEV_LAYER_ENTRY_, ~)
#undef ANYDEV_LAYER_ENTRY_
  return table;
}

}  // namespace anydev::core::layers

#endif  // ANYDEV_SRC_LAYERS_LAYER_TABLE_H_

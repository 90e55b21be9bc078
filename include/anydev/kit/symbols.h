// SPDX-License-Identifier: Apache-2.0
// Symbol tables declared once from an X-macro list.
//
// A backend lists its entry points as LIST(X), each entry
//
//   X(member, need, type, key)
//
//   member  the table's field name;
//   need    REQUIRED (resolution fails without it) or OPTIONAL (the field
//           stays null and the backend checks it where it is used);
//   type    the field's function-pointer type;
//   key     what the backend's resolver is asked for (a name, or a struct
//           with a name and a version: whatever the resolver's key_type is).
//
// ANYDEV_KIT_SYMBOL_FIELDS(LIST) declares the fields inside a struct, and
// ANYDEV_KIT_RESOLVE_SYMBOLS(LIST, table, resolver, &missing) fills them in
// list order and is a bool: false at the first REQUIRED entry the resolver
// does not find (`missing` then names it; later entries stay null). See
// docs/writing-a-backend.md for an example.
//
// A resolver is any object with `using key_type = ...;` and
// `void* operator()(const key_type& key, std::string* why) const`, which
// returns the symbol or nullptr and then says why. kit::dlsym_resolver
// (kit_library.h) is the plain one.
//
// A table is filled once, by one thread, and read-only afterwards.
#ifndef ANYDEV_KIT_SYMBOLS_H_
#define ANYDEV_KIT_SYMBOLS_H_

#include <string>

namespace anydev::kit {

enum class symbol_need { REQUIRED, OPTIONAL };

// The first REQUIRED entry that the resolver did not find. Owned by the caller.
template <class Key>
struct missing_symbol {
  const char* member = nullptr;  // the table's field name
  Key key{};                     // what the resolver was asked for
  std::string why;               // the resolver's words
};

// Resolves one entry into *slot; false when it is REQUIRED and missing (then
// *missing says which and why).
template <class Resolver, class Fn>
bool resolve_symbol(const Resolver& resolver, const typename Resolver::key_type& key,
                    symbol_need need, const char* member, Fn* slot,
                    missing_symbol<typename Resolver::key_type>* missing) {
  std::string why;
  void* symbol = resolver(key, &why);
  *slot = reinterpret_cast<Fn>(symbol);
  if (symbol != nullptr || need == symbol_need::OPTIONAL) return true;
  missing->member = member;
  missing->key = key;
  missing->why = why;
  return false;
}

}  // namespace anydev::kit

#define ANYDEV_KIT_SYMBOL_FIELD_(member, need, type, key) type member = nullptr;
#define ANYDEV_KIT_SYMBOL_FIELDS(LIST) LIST(ANYDEV_KIT_SYMBOL_FIELD_)

#define ANYDEV_KIT_RESOLVE_ONE_(member, need, type, key)                                         \
  &&::anydev::kit::resolve_symbol(kit_resolver_, key, ::anydev::kit::symbol_need::need, #member, \
                                  &kit_table_.member, kit_missing_)

// A bool: true when every REQUIRED entry of LIST was found in `resolver`.
#define ANYDEV_KIT_RESOLVE_SYMBOLS(LIST, table, resolver, missing)        \
  ([&](auto& kit_table_, const auto& kit_resolver_, auto* kit_missing_) { \
    return true LIST(ANYDEV_KIT_RESOLVE_ONE_);                            \
  }((table), (resolver), (missing)))

#endif  // ANYDEV_KIT_SYMBOLS_H_

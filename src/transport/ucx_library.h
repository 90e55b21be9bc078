// SPDX-License-Identifier: Apache-2.0
// The UCP entry points the transport uses, opened at run time: libucp.so.0
// (or ANYDEV_UCX_LIBRARY) with dlopen, every symbol resolved through one
// table. libanydev.so has no link-time dependency on UCX; UCX's headers are
// used at build time for types and macros only (the function declarations
// are used through decltype, never called directly).
//
// Ownership: the library is opened once per process and never closed (UCX
// keeps threads and atexit handlers of its own). Thread-safe: ucx_library()
// opens it under a once-flag; the table is immutable afterwards.
#ifndef ANYDEV_SRC_TRANSPORT_UCX_LIBRARY_H_
#define ANYDEV_SRC_TRANSPORT_UCX_LIBRARY_H_

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <string>

namespace anydev::core::transport {

#define ANYDEV_UCX_SYMBOLS(X)   \
  X(ucp_config_read)            \
  X(ucp_config_release)         \
  X(ucp_init_version)           \
  X(ucp_cleanup)                \
  X(ucp_context_query)          \
  X(ucp_worker_create)          \
  X(ucp_worker_destroy)         \
  X(ucp_worker_get_address)     \
  X(ucp_worker_release_address) \
  X(ucp_worker_progress)        \
  X(ucp_worker_get_efd)         \
  X(ucp_worker_arm)             \
  X(ucp_ep_create)              \
  X(ucp_ep_close_nbx)           \
  X(ucp_ep_flush_nbx)           \
  X(ucp_tag_send_nbx)           \
  X(ucp_tag_recv_nbx)           \
  X(ucp_put_nbx)                \
  X(ucp_get_nbx)                \
  X(ucp_request_check_status)   \
  X(ucp_request_cancel)         \
  X(ucp_request_free)           \
  X(ucp_mem_map)                \
  X(ucp_mem_unmap)              \
  X(ucp_mem_query)              \
  X(ucp_rkey_pack)              \
  X(ucp_rkey_buffer_release)    \
  X(ucp_ep_rkey_unpack)         \
  X(ucp_rkey_ptr)               \
  X(ucp_rkey_destroy)           \
  X(ucs_status_string)

// Entry points used where present and done without otherwise (libucs's, found
// through libucp's dependencies).
#define ANYDEV_UCX_OPTIONAL_SYMBOLS(X) \
  X(ucs_log_push_handler)              \
  X(ucs_log_pop_handler)               \
  X(ucs_log_num_handlers)

// The resolved entry points (each a pointer of its declared type; an
// optional one absent from the library stays nullptr).
struct UcxLibrary {
#define ANYDEV_UCX_FIELD_(name) decltype(&::name) name = nullptr;
  ANYDEV_UCX_SYMBOLS(ANYDEV_UCX_FIELD_)
  ANYDEV_UCX_OPTIONAL_SYMBOLS(ANYDEV_UCX_FIELD_)
#undef ANYDEV_UCX_FIELD_
  std::string path;  // the file opened (or tried)
};

// The table, or nullptr with `*reason` naming the file, the symbol and
// dlerror()'s text. The outcome of the first call is kept for the process.
const UcxLibrary* ucx_library(std::string* reason);

}  // namespace anydev::core::transport

#endif  // ANYDEV_SRC_TRANSPORT_UCX_LIBRARY_H_

/* SPDX-License-Identifier: Apache-2.0 */
/* anydev_dlpack.h with a DLPack 1.x <dlpack/dlpack.h> (the stand-in in
 * dlpack1/): its versioned names must be the header's own types, and its
 * flag values the header's. Compiled, never run (target
 * anydev-dlpack1-header-check, built with anydev-dlpack-tests). */
#include "anydev/anydev_dlpack.h"

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
#error "dlpack1/dlpack/dlpack.h was not the header included"
#endif

_Static_assert(ANYDEV_DLPACK_FLAG_READ_ONLY == DLPACK_FLAG_BITMASK_READ_ONLY, "READ_ONLY");
_Static_assert(ANYDEV_DLPACK_FLAG_IS_COPIED == DLPACK_FLAG_BITMASK_IS_COPIED, "IS_COPIED");
_Static_assert(ANYDEV_DLPACK_CODE_BOOL == kDLBool, "kDLBool");

/* Assigning pointers between the names compiles without a cast only when
 * they are the same type (-Werror turns a mismatch into an error). */
anydev_status_t anydev_dlpack1_header_check_c(DLManagedTensorVersioned* tensor,
                                              anydev_buffer_t* out) {
  anydev_dlpack_managed_tensor_versioned_t* same = tensor;
  DLPackVersion* version = &same->version;
  anydev_dlpack_version_t* same_version = version;
  (void)same_version;
  return anydev_buffer_from_dlpack_versioned(NULL, same, out);
}

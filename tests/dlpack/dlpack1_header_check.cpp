// SPDX-License-Identifier: Apache-2.0
// dlpack.hpp with a DLPack 1.x <dlpack/dlpack.h> (the stand-in in dlpack1/):
// anydev's versioned names are the header's own types. Compiled, never run
// (target anydev-dlpack1-header-check).
#include <type_traits>

#include "anydev/dlpack.hpp"

static_assert(DLPACK_MAJOR_VERSION >= 1, "dlpack1/dlpack/dlpack.h was not the header included");
static_assert(std::is_same_v<anydev_dlpack_managed_tensor_versioned_t, DLManagedTensorVersioned>);
static_assert(std::is_same_v<anydev_dlpack_version_t, DLPackVersion>);
static_assert(std::is_same_v<anydev::DLPackVersionedTensor,
                             anydev::detail::OwnedDLPack<DLManagedTensorVersioned>>);

// SPDX-License-Identifier: Apache-2.0
// Memory and events a GPU backend shares with other processes: the optional
// entries shareable_alloc, memory_export, memory_import, memory_unshare,
// event_create_shareable, event_export and event_import (backend_entries.h),
// written once over the API traits (gpu_api.h) plus what sharing adds:
//
//   alloc_handle_t, alloc_prop, ipc_event_handle_t   the VMM allocation
//       handle, its properties and the 64-byte IPC event handle
//   make_alloc_prop(device, alloc_prop*)   pinned memory of `device`
//       exportable as a POSIX fd (HIP: in the layout of the runtime loaded)
//   kHandlePosixFd, kGranularityMinimum, kSharedEventFlags,
//       kHostRegisterFlags
//   share_support(device, std::string* why_not) -> bool   whether device
//       memory can be exported as a POSIX fd on `device` (symbols present,
//       device attributes); why_not names the symbol or attribute
//   device_uuid(device, std::uint8_t out[16])       the device's identity
//
// Device memory: a VMM allocation (MemCreate with a POSIX fd handle type,
// MemAddressReserve, MemMap, MemSetAccess) exported with
// MemExportToShareableHandle; the importer maps the same allocation
// (MemImportFromShareableHandle). The driver counts the allocation's
// handles and mappings: the memory lives until the last process lets go.
// Host memory: a sealed memfd mapped MAP_SHARED in each process and
// registered with the driver (MemHostRegister) in each. Events: an
// interprocess event (IpcGetEventHandle / IpcOpenEventHandle) plus a pid
// page (gpu_share_page.h).
//
// The entries live in gpu_share_memory.h and gpu_share_events.h, the
// payload in gpu_share_payload.h; this header gathers them for gpu_table.h.
#ifndef ANYDEV_BACKENDS_GPU_GPU_SHARE_H_
#define ANYDEV_BACKENDS_GPU_GPU_SHARE_H_

#include "gpu_share_events.h"
#include "gpu_share_memory.h"

#endif  // ANYDEV_BACKENDS_GPU_GPU_SHARE_H_

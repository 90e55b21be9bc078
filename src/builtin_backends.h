// Backends linked into libanydev.so. The registry treats them exactly like
// plugins: it calls their entry point and uses the table they return.
#ifndef ANYDEV_SRC_BUILTIN_BACKENDS_H_
#define ANYDEV_SRC_BUILTIN_BACKENDS_H_

#include "anydev/backend.h"

extern "C" anydev_status_t anydev_cpu_backend_entry(uint32_t core_abi_version,
                                                    const anydev_core_services_t* core,
                                                    const anydev_backend_table_t** out);

#endif  // ANYDEV_SRC_BUILTIN_BACKENDS_H_

// SPDX-License-Identifier: Apache-2.0
// anydev-info --list: one line per device of every available backend, like
// sycl-ls or nvidia-smi -L: "[cpu:0] AMD EPYC 7B13, 15.6 GiB", or the error
// when the device could not be opened. Pure function of the report.
#ifndef ANYDEV_TOOLS_ANYDEV_INFO_DEVICE_LIST_H_
#define ANYDEV_TOOLS_ANYDEV_INFO_DEVICE_LIST_H_

#include <ostream>

#include "system_report.h"

namespace anydev_info {

// Writes the lines; returns how many devices were listed.
int write_device_list(std::ostream& out, const SystemReport& report);

}  // namespace anydev_info

#endif  // ANYDEV_TOOLS_ANYDEV_INFO_DEVICE_LIST_H_

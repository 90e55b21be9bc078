// SPDX-License-Identifier: Apache-2.0
// ze_result_t -> anydev status and message. Stateless; thread-safe.
#ifndef ANYDEV_BACKENDS_LEVEL_ZERO_LZ_ERRORS_H_
#define ANYDEV_BACKENDS_LEVEL_ZERO_LZ_ERRORS_H_

#include <level_zero/ze_api.h>

#include <string>

#include "anydev/backend.h"
#include "anydev/kit/cat.h"
#include "lz_services.h"

namespace anydev::level_zero {

using kit::cat;

// OUT_OF_MEMORY, INVALID_ARGUMENT, UNSUPPORTED, ... and DEVICE otherwise.
anydev_status_t status_for(ze_result_t result);
// "ZE_RESULT_ERROR_UNINITIALIZED (0x78000001)"; "ze_result_t 0x..." when unknown.
std::string describe_result(ze_result_t result);
// Records "<call> failed: <describe_result> in <operation>" with `status`.
anydev_status_t report_failure(anydev_status_t status, ze_result_t result, const char* call,
                               const std::string& operation);
inline anydev_status_t report_failure(ze_result_t result, const char* call,
                                      const std::string& operation) {
  return report_failure(status_for(result), result, call, operation);
}
// Records a message that no ze_result_t goes with.
anydev_status_t report_error(anydev_status_t status, const std::string& message);

}  // namespace anydev::level_zero

#endif  // ANYDEV_BACKENDS_LEVEL_ZERO_LZ_ERRORS_H_

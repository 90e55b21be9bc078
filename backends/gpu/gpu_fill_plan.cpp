// SPDX-License-Identifier: Apache-2.0
#include "gpu_fill_plan.h"

#include <algorithm>
#include <cstring>

#include "gpu_fill_kernel.h"

namespace anydev::gpu {

FillPlan plan_fill(const void* pattern, std::size_t pattern_size, std::size_t bytes, bool strided) {
  const auto* p = static_cast<const unsigned char*>(pattern);
  const std::size_t period = fill_period(pattern, pattern_size);

  FillPlan plan;
  switch (period) {
    case 1:
      plan.passes[plan.size++] = {FillPass::Kind::kD8, p[0], 0, bytes, 0};
      return plan;
    case 2: {
      std::uint16_t half = 0;
      std::memcpy(&half, p, sizeof(half));
      plan.passes[plan.size++] = {FillPass::Kind::kD16, half, 0, bytes / 2, 0};
      return plan;
    }
    case 4: {
      std::uint32_t word = 0;
      std::memcpy(&word, p, sizeof(word));
      plan.passes[plan.size++] = {FillPass::Kind::kD32, word, 0, bytes / 4, 0};
      return plan;
    }
    default:
      // bytes is a multiple of the period: 0 (nothing to write) or at least one period.
      if (bytes == 0) return plan;
      {
        // kStridedFillHeadBytes is a multiple of the period, so the head is too.
        const std::size_t head = strided ? std::min(bytes, kStridedFillHeadBytes) : period;
        for (std::size_t offset = 0; offset < period; offset += 4) {
          std::uint32_t word = 0;
          std::memcpy(&word, p + offset, sizeof(word));
          plan.passes[plan.size++] =
              strided ? FillPass{FillPass::Kind::kD2D32, word, offset, head / period, period}
                      : FillPass{FillPass::Kind::kD32, word, offset, 1, 0};
        }
        if (bytes > head) plan.replicate_from = head;
      }
      return plan;
  }
}

}  // namespace anydev::gpu

// SPDX-License-Identifier: Apache-2.0
// Fuzz target: random sequences of C ABI calls on the cpu backend (buffers,
// views, fills, copies between buffers on two streams, copies from and to
// host memory, releases), checked against a model that is just the bytes
// each allocation should hold. Each call's status must be the one the model
// predicts (the argument rules of anydev.h), a failing call must change no
// byte, and after every synchronize the memory must equal the model.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "anydev/anydev.h"

namespace {

[[noreturn]] void Fail(const char* what, int line) {
  std::fprintf(stderr, "api_sequence_fuzz: %s (line %d): %s\n", what, line,
               anydev_last_error_message());
  std::abort();
}
#define REQUIRE(c) \
  if (!(c)) Fail(#c, __LINE__)

struct Input {
  const std::uint8_t* data;
  std::size_t size;
  std::uint8_t byte() {
    if (size == 0) return 0;
    --size;
    return *data++;
  }
  std::size_t below(std::size_t limit) { return limit == 0 ? 0 : byte() % limit; }
};

// Two streams on cpu:0, made once for the whole run.
struct Contexts {
  anydev_context_t main = nullptr;
  anydev_context_t second = nullptr;
  Contexts() {
    REQUIRE(anydev_context_create("cpu", 0, &main) == ANYDEV_SUCCESS);
    anydev_stream_t stream = nullptr;
    REQUIRE(anydev_context_create_stream(main, &stream) == ANYDEV_SUCCESS);
    REQUIRE(anydev_context_with_stream(main, stream, &second) == ANYDEV_SUCCESS);
    REQUIRE(anydev_stream_release(stream) == ANYDEV_SUCCESS);
  }
};

struct Slot {
  anydev_buffer_t buffer = nullptr;
  anydev_memory_kind_t kind = ANYDEV_MEMORY_HOST;
  std::vector<std::uint8_t> model;
};

constexpr std::size_t kSlots = 4;
constexpr std::size_t kMaxBytes = 512;

void Synchronize(const Contexts& c) {
  REQUIRE(anydev_context_synchronize(c.main) == ANYDEV_SUCCESS);
  REQUIRE(anydev_context_synchronize(c.second) == ANYDEV_SUCCESS);
}

void Compare(const Contexts& c, const std::array<Slot, kSlots>& slots) {
  Synchronize(c);
  for (const Slot& slot : slots) {
    if (slot.buffer == nullptr || slot.model.empty()) continue;
    std::vector<std::uint8_t> actual(slot.model.size());
    REQUIRE(anydev_enqueue_copy_to_host(c.main, actual.data(), actual.size(), slot.buffer) ==
            ANYDEV_SUCCESS);
    REQUIRE(anydev_context_synchronize(c.main) == ANYDEV_SUCCESS);
    REQUIRE(actual == slot.model);
    if (slot.kind == ANYDEV_MEMORY_HOST) {
      anydev_buffer_info_t info{};
      info.struct_size = sizeof(info);
      REQUIRE(anydev_buffer_get_info(slot.buffer, &info) == ANYDEV_SUCCESS);
      REQUIRE(std::memcmp(info.address, slot.model.data(), slot.model.size()) == 0);
    }
  }
}

// A uint8 view [offset, offset + count) of the slot, or nullptr after
// checking that an invalid one is refused with OUT_OF_RANGE.
anydev_buffer_t View(Slot& slot, std::size_t offset, std::size_t count) {
  anydev_buffer_t view = nullptr;
  const anydev_status_t s =
      anydev_buffer_create_sub_buffer(slot.buffer, ANYDEV_DTYPE_UINT8, offset, count, &view);
  if (offset + count > slot.model.size()) {
    REQUIRE(s == ANYDEV_ERROR_OUT_OF_RANGE);
    REQUIRE(view == nullptr);
    return nullptr;
  }
  REQUIRE(s == ANYDEV_SUCCESS);
  return view;
}

anydev_context_t Pick(const Contexts& c, Input& in) {
  switch (in.below(3)) {
    case 0:
      return nullptr;  // the buffer's own context
    case 1:
      return c.main;
    default:
      return c.second;
  }
}

void Run(const Contexts& c, Input in) {
  std::array<Slot, kSlots> slots;
  for (int step = 0; step < 48 && in.size > 0; ++step) {
    Slot& slot = slots[in.below(kSlots)];
    switch (in.below(7)) {
      case 0: {  // (re)create
        if (slot.buffer != nullptr) REQUIRE(anydev_buffer_release(slot.buffer) == ANYDEV_SUCCESS);
        slot.kind = in.byte() % 2 ? ANYDEV_MEMORY_DEVICE : ANYDEV_MEMORY_HOST;
        const std::size_t bytes = in.below(kMaxBytes + 1);
        REQUIRE(anydev_buffer_create(c.main, slot.kind, ANYDEV_DTYPE_UINT8, bytes, &slot.buffer) ==
                ANYDEV_SUCCESS);
        slot.model.assign(bytes, 0);
        // New memory holds anything: define it.
        if (bytes > 0) {
          const std::uint8_t zero = 0;
          REQUIRE(anydev_enqueue_fill(nullptr, slot.buffer, &zero, 1) == ANYDEV_SUCCESS);
        }
        break;
      }
      case 1: {  // fill a view
        if (slot.buffer == nullptr) break;
        const std::size_t offset = in.below(slot.model.size() + 2);
        const std::size_t count = in.below(slot.model.size() + 2);
        static constexpr std::size_t kPatterns[] = {1, 2, 4, 8, 16, 3};
        const std::size_t pattern_size = kPatterns[in.below(6)];
        std::uint8_t pattern[16];
        for (std::uint8_t& b : pattern) b = in.byte();
        anydev_buffer_t view = View(slot, offset, count);
        if (view == nullptr) break;
        const anydev_status_t s = anydev_enqueue_fill(Pick(c, in), view, pattern, pattern_size);
        const bool valid = (pattern_size & (pattern_size - 1)) == 0 && count % pattern_size == 0 &&
                           offset % (pattern_size < 4 ? pattern_size : 4) == 0;
        REQUIRE((s == ANYDEV_SUCCESS) == valid);
        if (valid) {
          for (std::size_t i = 0; i < count; ++i) {
            slot.model[offset + i] = pattern[i % pattern_size];
          }
        } else {
          REQUIRE(s == ANYDEV_ERROR_INVALID_ARGUMENT);
        }
        REQUIRE(anydev_buffer_release(view) == ANYDEV_SUCCESS);
        break;
      }
      case 2: {  // copy between views of two slots (maybe the same one)
        Slot& other = slots[in.below(kSlots)];
        if (slot.buffer == nullptr || other.buffer == nullptr) break;
        const std::size_t dst_offset = in.below(slot.model.size() + 1);
        const std::size_t src_offset = in.below(other.model.size() + 1);
        const std::size_t count = in.below(kMaxBytes / 4);
        const std::size_t src_count = count + in.below(3);
        anydev_buffer_t dst = View(slot, dst_offset, count);
        anydev_buffer_t src = View(other, src_offset, src_count);
        if (dst != nullptr && src != nullptr) {
          const bool overlap = &slot == &other && count > 0 && dst_offset < src_offset + count &&
                               src_offset < dst_offset + count;
          const anydev_status_t s = anydev_enqueue_copy(Pick(c, in), dst, src);
          if (overlap) {
            REQUIRE(s == ANYDEV_ERROR_INVALID_ARGUMENT);
          } else {
            REQUIRE(s == ANYDEV_SUCCESS);
            const std::vector<std::uint8_t> moved(other.model.begin() + src_offset,
                                                  other.model.begin() + src_offset + count);
            std::copy(moved.begin(), moved.end(), slot.model.begin() + dst_offset);
          }
        }
        if (dst != nullptr) REQUIRE(anydev_buffer_release(dst) == ANYDEV_SUCCESS);
        if (src != nullptr) REQUIRE(anydev_buffer_release(src) == ANYDEV_SUCCESS);
        break;
      }
      case 3: {  // copy from host memory (kept until the synchronize)
        if (slot.buffer == nullptr) break;
        std::vector<std::uint8_t> source(in.below(kMaxBytes + 8));
        for (std::uint8_t& b : source) b = in.byte();
        const anydev_status_t s =
            anydev_enqueue_copy_from_host(Pick(c, in), slot.buffer, source.data(), source.size());
        if (source.empty() && !slot.model.empty()) {
          REQUIRE(s == ANYDEV_ERROR_INVALID_ARGUMENT);  // an empty vector's data() is NULL
        } else if (source.size() < slot.model.size()) {
          REQUIRE(s == ANYDEV_ERROR_OUT_OF_RANGE);
        } else {
          REQUIRE(s == ANYDEV_SUCCESS);
          std::copy(source.begin(), source.begin() + slot.model.size(), slot.model.begin());
        }
        Synchronize(c);  // `source` goes out of scope
        break;
      }
      case 4: {  // copy to host memory and check it
        if (slot.buffer == nullptr) break;
        std::vector<std::uint8_t> out(in.below(kMaxBytes + 8), 0xee);
        const anydev_status_t s =
            anydev_enqueue_copy_to_host(Pick(c, in), out.data(), out.size(), slot.buffer);
        if (out.size() < slot.model.size()) {
          REQUIRE(s == (out.empty() ? ANYDEV_ERROR_INVALID_ARGUMENT : ANYDEV_ERROR_OUT_OF_RANGE));
          Synchronize(c);
          break;
        }
        REQUIRE(s == ANYDEV_SUCCESS);
        Synchronize(c);
        REQUIRE(std::equal(slot.model.begin(), slot.model.end(), out.begin()));
        break;
      }
      case 5:
        Compare(c, slots);
        break;
      default:  // an extra reference released at once, or the slot released
        if (slot.buffer == nullptr) break;
        if (in.byte() % 2) {
          REQUIRE(anydev_buffer_retain(slot.buffer) == ANYDEV_SUCCESS);
          REQUIRE(anydev_buffer_release(slot.buffer) == ANYDEV_SUCCESS);
        } else {
          REQUIRE(anydev_buffer_release(slot.buffer) == ANYDEV_SUCCESS);
          slot.buffer = nullptr;
          slot.model.clear();
        }
        break;
    }
  }
  Compare(c, slots);
  for (Slot& slot : slots) {
    if (slot.buffer != nullptr) REQUIRE(anydev_buffer_release(slot.buffer) == ANYDEV_SUCCESS);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Contexts contexts;  // lives for the run (reported reachable, not leaked)
  Run(contexts, Input{data, size});
  return 0;
}

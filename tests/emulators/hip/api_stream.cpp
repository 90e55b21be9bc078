// SPDX-License-Identifier: Apache-2.0
// Streams and events. Each belongs to the device current on the calling
// thread when it was created; a record on a stream of another device is
// hipErrorInvalidHandle (stricter than HIP, which leaves it undefined).
#include <hip/hip_runtime_api.h>

#include <memory>

#include "core_config.h"
#include "core_share.h"
#include "core_stream.h"
#include "hip_face.h"

namespace hip = anydev_emu::hip;
namespace core = anydev_emu::core;
using hip::Call;

namespace {

// A new stream or event (from `make`) of the current device, registered into
// *out; hipErrorInvalidValue for a null `out` or flags that are not `valid`.
template <class Handle, class Make>
hipError_t create(Handle* out, bool valid, Make make) {
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  if (out == nullptr || !valid) return hipErrorInvalidValue;
  *out = static_cast<Handle>(core::register_object(make(c)));
  return hipSuccess;
}

}  // namespace

extern "C" {

hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned int flags) {
  hip::count(Call::hipStreamCreateWithFlags);
  const bool valid = (flags & ~static_cast<unsigned>(hipStreamNonBlocking)) == 0;
  return create(stream, valid, [](core::Context* c) { return core::Stream::create(c); });
}

// Each stream runs on its own worker, so a priority changes nothing here; it
// is accepted (clamped into the range, as the runtime does) and counted.
hipError_t hipStreamCreateWithPriority(hipStream_t* stream, unsigned int flags, int priority) {
  hip::count(Call::hipStreamCreateWithPriority);
  static_cast<void>(priority);
  const bool valid = (flags & ~static_cast<unsigned>(hipStreamNonBlocking)) == 0;
  return create(stream, valid, [](core::Context* c) { return core::Stream::create(c); });
}

// ROCm's range: 0 (normal) and -1 (high).
hipError_t hipDeviceGetStreamPriorityRange(int* least, int* greatest) {
  hip::count(Call::hipDeviceGetStreamPriorityRange);
  core::Context* c = nullptr;
  if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
  if (least != nullptr) *least = 0;
  if (greatest != nullptr) *greatest = -1;
  return hipSuccess;
}

// Queued work still runs; the null stream is not destroyed (invalid handle).
hipError_t hipStreamDestroy(hipStream_t stream) {
  hip::count(Call::hipStreamDestroy);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::destroy_stream(stream, "hipStreamDestroy"));
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
  hip::count(Call::hipStreamSynchronize);
  core::StreamRef s;
  if (const hipError_t e = hip::stream_of(stream, "hipStreamSynchronize", &s); e != hipSuccess) {
    return e;
  }
  return hip::to_hip(s->synchronize());
}

hipError_t hipStreamQuery(hipStream_t stream) {
  hip::count(Call::hipStreamQuery);
  core::StreamRef s;
  if (const hipError_t e = hip::stream_of(stream, "hipStreamQuery", &s); e != hipSuccess) return e;
  return hip::to_hip(s->query());
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
  hip::count(Call::hipStreamWaitEvent);
  core::EventRef e;
  core::StreamRef s;
  if (const hipError_t r = hip::event_of(event, "hipStreamWaitEvent", &e); r != hipSuccess) {
    return r;
  }
  if (const hipError_t r = hip::stream_of(stream, "hipStreamWaitEvent", &s); r != hipSuccess) {
    return r;
  }
  if (flags != 0) return hipErrorInvalidValue;
  core::wait_event(s, e);
  return hipSuccess;
}

hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags) {
  hip::count(Call::hipEventCreateWithFlags);
  constexpr unsigned kKnown = hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess |
                              hipEventReleaseToDevice | hipEventReleaseToSystem;
  // HIP documents that an interprocess event must also disable timing.
  const bool valid = (flags & ~kKnown) == 0 &&
                     ((flags & hipEventInterprocess) == 0 || (flags & hipEventDisableTiming) != 0);
  if (valid && (flags & hipEventInterprocess) != 0) {
    core::Context* c = nullptr;
    if (const hipError_t e = hip::current(&c); e != hipSuccess) return e;
    if (event == nullptr) return hipErrorInvalidValue;
    core::EventRef e;
    if (const hipError_t r = hip::to_hip(core::ipc_event_create(c, &e)); r != hipSuccess) return r;
    *event = static_cast<hipEvent_t>(core::register_object(e));
    return hipSuccess;
  }
  const bool timing = (flags & hipEventDisableTiming) == 0;
  return create(event, valid, [timing](core::Context* c) {
    auto created = std::make_shared<core::Event>(c);
    created->timing = timing;
    return created;
  });
}

hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  hip::count(Call::hipEventElapsedTime);
  core::EventRef a;
  core::EventRef b;
  if (const hipError_t r = hip::event_of(start, "hipEventElapsedTime", &a); r != hipSuccess) {
    return r;
  }
  if (const hipError_t r = hip::event_of(stop, "hipEventElapsedTime", &b); r != hipSuccess) {
    return r;
  }
  if (ms == nullptr) return hipErrorInvalidValue;
  return hip::to_hip(core::elapsed_time(a, b, ms));
}

hipError_t hipEventDestroy(hipEvent_t event) {
  hip::count(Call::hipEventDestroy);
  if (const hipError_t e = hip::ready(); e != hipSuccess) return e;
  return hip::to_hip(core::destroy_event(event, "hipEventDestroy"));
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  hip::count(Call::hipEventRecord);
  core::EventRef e;
  core::StreamRef s;
  if (const hipError_t r = hip::event_of(event, "hipEventRecord", &e); r != hipSuccess) return r;
  if (const hipError_t r = hip::stream_of(stream, "hipEventRecord", &s); r != hipSuccess) return r;
  return hip::to_hip(core::record_event(e, s, "hipEventRecord"));
}

hipError_t hipEventQuery(hipEvent_t event) {
  hip::count(Call::hipEventQuery);
  core::EventRef e;
  if (const hipError_t r = hip::event_of(event, "hipEventQuery", &e); r != hipSuccess) return r;
  return hip::to_hip(core::query_event(e));
}

hipError_t hipEventSynchronize(hipEvent_t event) {
  hip::count(Call::hipEventSynchronize);
  core::EventRef e;
  if (const hipError_t r = hip::event_of(event, "hipEventSynchronize", &e); r != hipSuccess) {
    return r;
  }
  core::synchronize_event(e);
  return hipSuccess;
}

}  // extern "C"

// SPDX-License-Identifier: Apache-2.0
// anydev's log messages into Python (python/anydev/_logging.py builds
// anydev.set_log_handler on these). The C callback `forward` never waits for
// the GIL, so it cannot deadlock against a Python thread that holds the GIL
// while it waits for one of anydev's threads:
//  - on a thread that holds the GIL (a Python thread inside an anydev call)
//    it calls the Python `emit` at once, in order with the caller's code;
//  - on any other thread (anydev's own, or a Python thread that released the
//    GIL around a blocking call) it queues the message; a Python thread
//    (_logging.py's drain thread) takes them with _take_log_records.
// State: one process-wide LogForwarding, never destroyed. `emit` is touched
// only with the GIL held; the queue only under its mutex.
#include <pybind11/pybind11.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "anydev/anydev.h"
#include "py_errors.h"

namespace py = pybind11;

namespace anydev::python {
namespace {

// At most this many queued messages; beyond, messages are counted and dropped.
constexpr std::size_t kQueueLimit = 10000;

struct LogForwarding {
  py::object* emit = nullptr;  // GIL: the Python callable(level, message), or null
  std::mutex mutex;
  std::condition_variable queued;
  std::deque<std::pair<int, std::string>> records;  // mutex
  std::size_t dropped = 0;                          // mutex
  bool closed = false;                              // mutex: wakes the drain
};

LogForwarding& forwarding() {
  static auto* state = new LogForwarding();  // never destroyed: outlives the interpreter
  return *state;
}

// The messages of the WithoutGil call running on this thread, if any.
thread_local WithoutGil::Held* t_held = nullptr;

void forward(anydev_log_severity_t severity, const char* message, void*) noexcept {
  LogForwarding& f = forwarding();
  try {
    if (WithoutGil::Held* held = t_held; held != nullptr && PyGILState_Check() == 0) {
      if (held->records.size() >= kQueueLimit) {
        ++held->dropped;
      } else {
        held->records.emplace_back(static_cast<int>(severity), message);
      }
      return;
    }
    if (PyGILState_Check() != 0) {
      if (f.emit == nullptr) return;
      py::object emit = *f.emit;  // own reference: a handler may replace it
      try {
        emit(static_cast<int>(severity), library_text(message));
      } catch (py::error_already_set& error) {
        error.discard_as_unraisable("anydev log handler");
      }
      return;
    }
    std::lock_guard lock(f.mutex);
    if (f.records.size() >= kQueueLimit) {
      ++f.dropped;
      return;
    }
    f.records.emplace_back(static_cast<int>(severity), message);
    f.queued.notify_one();
  } catch (...) {
    // Out of memory: the message is lost; nothing may escape into the C ABI.
  }
}

// Installs `emit` (None: back to stderr). Waits, without the GIL, until the
// previous C callback can no longer run (anydev_set_log_callback).
void set_log_sink(py::object emit) {
  LogForwarding& f = forwarding();
  if (emit.is_none()) {
    {
      py::gil_scoped_release unlocked;
      check(anydev_set_log_callback(nullptr, nullptr));
    }
    delete std::exchange(f.emit, nullptr);
    return;
  }
  delete std::exchange(f.emit, new py::object(std::move(emit)));
  py::gil_scoped_release unlocked;
  check(anydev_set_log_callback(forward, nullptr));
}

// Blocks (without the GIL) until messages are queued or the queue is closed;
// returns ([(level, message), ...], dropped), or None once closed and empty.
py::object take_log_records() {
  LogForwarding& f = forwarding();
  std::deque<std::pair<int, std::string>> taken;
  std::size_t dropped = 0;
  {
    py::gil_scoped_release unlocked;
    std::unique_lock lock(f.mutex);
    f.queued.wait(lock, [&f] { return f.closed || !f.records.empty() || f.dropped != 0; });
    taken.swap(f.records);
    dropped = std::exchange(f.dropped, 0);
  }
  if (taken.empty() && dropped == 0) return py::none();
  py::list records;
  for (auto& [level, message] : taken) {
    records.append(py::make_tuple(level, library_text(message)));
  }
  return py::make_tuple(records, dropped);
}

// Opens (false) or closes (true) the queue: closing wakes take_log_records.
void set_log_queue_closed(bool closed) {
  LogForwarding& f = forwarding();
  std::lock_guard lock(f.mutex);
  f.closed = closed;
  f.queued.notify_all();
}

}  // namespace

WithoutGil::WithoutGil() : previous_(std::exchange(t_held, &held_)), state_(PyEval_SaveThread()) {}

WithoutGil::~WithoutGil() {
  PyEval_RestoreThread(state_);
  t_held = previous_;
  if (held_.records.empty() && held_.dropped == 0) return;
  LogForwarding& f = forwarding();
  if (f.emit == nullptr) return;  // the handler was removed meanwhile
  // An exception of the call may be on its way: nothing may escape here.
  try {
    const py::error_scope pending;
    py::object emit = *f.emit;
    if (held_.dropped != 0) {
      held_.records.emplace_back(static_cast<int>(ANYDEV_LOG_SEVERITY_WARN),
                                 std::to_string(held_.dropped) +
                                     " log messages dropped: more than " +
                                     std::to_string(kQueueLimit) + " in one call");
    }
    for (const auto& [level, message] : held_.records) {
      try {
        emit(level, library_text(message));
      } catch (py::error_already_set& error) {
        error.discard_as_unraisable("anydev log handler");
      }
    }
  } catch (...) {
    // Out of memory: the messages are lost.
  }
}

void bind_logging(py::module_& m) {
  m.def("_set_log_sink", &set_log_sink, py::arg("emit"));
  m.def("_take_log_records", &take_log_records);
  m.def("_set_log_queue_closed", &set_log_queue_closed, py::arg("closed"));
  m.def(
      "_set_log_level",
      [](int level) { check(anydev_set_log_level(static_cast<anydev_log_severity_t>(level))); },
      py::arg("level"));
  m.def("_log_level", [] { return static_cast<int>(anydev_log_level()); });
}

}  // namespace anydev::python

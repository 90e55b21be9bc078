// SPDX-License-Identifier: Apache-2.0
#include "transport/communicator.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <unordered_map>

#include "api/buffer_access.h"
#include "runtime/registry_devices.h"
#include "support/backend_calls.h"
#include "support/environment.h"
#include "support/logging.h"
#include "support/status.h"
#include "transport/transfer_gate.h"
#include "transport/ucx_log_capture.h"

namespace anydev::core::transport {

using Clock = std::chrono::steady_clock;

namespace {

constexpr char kAddressMagic[8] = {'a', 'n', 'y', 'd', 'u', 'c', 'x', '1'};
constexpr char kRegionMagic[8] = {'a', 'n', 'y', 'd', 'r', 'g', 'n', '1'};
constexpr std::size_t kAddressHeader = 8 + 4 + 4 + 4 + 8;  // magic, key, pid, length, checksum
constexpr std::size_t kRegionHeader =
    8 + 4 + 8 + 8 + 4 + 8;  // magic, key, address, bytes, length, checksum
constexpr std::uint64_t kLastChunk = std::uint64_t{1} << 32;

// Tag bits: the sender's key (31 bits) above the last-chunk bit above the
// user's 32-bit tag.
std::uint64_t wire_tag(std::uint32_t key, std::uint32_t tag, bool last) {
  return (std::uint64_t{key} << 33) | (last ? kLastChunk : 0) | tag;
}

// FNV-1a over `n` bytes: UCX aborts the process on a malformed address
// (an assertion in its parser), so a damaged or forged one must be caught
// before UCX sees it.
std::uint64_t checksum(const std::uint8_t* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + 4);
}
void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + 8);
}
template <class T>
T get(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

const char* kind_name(TransferKind kind) {
  switch (kind) {
    case TransferKind::send:
      return "anydev_comm_enqueue_send";
    case TransferKind::recv:
      return "anydev_comm_enqueue_recv";
    case TransferKind::put:
      return "anydev_comm_enqueue_put";
    case TransferKind::get:
      return "anydev_comm_enqueue_get";
  }
  return "?";
}

bool outbound(TransferKind kind) { return kind == TransferKind::send || kind == TransferKind::put; }

// A decimal variable in [low, high]: `fallback` when unset, false (with
// `*why`) when set to anything else (docs/environment.md's rule).
bool read_number(const char* name, unsigned long long low, unsigned long long high,
                 unsigned long long fallback, unsigned long long* out, std::string* why) {
  const std::optional<std::string> text = env(name);
  if (!text) {
    *out = fallback;
    return true;
  }
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text->c_str(), &end, 10);
  if (text->empty() || !std::isdigit(static_cast<unsigned char>((*text)[0])) || *end != '\0' ||
      errno != 0 || v < low || v > high) {
    *why = std::string(name) + "='" + *text + "' is not a decimal number in " +
           std::to_string(low) + " .. " + std::to_string(high);
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

// One piece of a transfer: one UCX message (or put/get) of at most the
// chunk size. Owned by its Transfer; touched inside passes only
// (UCX's callbacks run inside progress or cancel, under ucx_mutex).
struct Chunk {
  enum State { waiting, copying_out, posted, copying_in, done };
  Transfer* transfer = nullptr;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  bool last = false;
  State state = waiting;
  void* request = nullptr;
  bool completed = false;  // UCX's callback ran
  ucs_status_t status = UCS_OK;
  std::size_t received = 0;
  std::uint64_t sender_tag = 0;
  int bounce = -1;
};

// One enqueued transfer. Owned by the pass state (active_; and the
// submission queue before that), then, if parked, by the communicator's
// parked list; holds its buffer's memory and context.
struct Transfer : std::enable_shared_from_this<Transfer> {
  enum Phase { waiting_stream, running, flushing, draining, finished };
  TransferKind kind;
  int peer = 0;
  std::uint32_t tag = 0;
  std::shared_ptr<const ContextState> context;  // the buffer's: its stream is gated
  std::shared_ptr<Allocation> allocation;       // kept until UCX is done with it
  anydev_bk_memory_ref_t ref{};                 // the view's start
  void* address = nullptr;                      // the view's start, for the direct path
  std::size_t bytes = 0;
  bool staged = false;
  ucs_memory_type_t memory_type = UCS_MEMORY_TYPE_HOST;
  std::shared_ptr<RemoteRegion> remote;
  std::size_t remote_offset = 0;
  anydev_bk_event_t ready = nullptr;  // the stream's work before the enqueue
  Phase phase = waiting_stream;
  Clock::time_point deadline{};
  std::vector<Chunk> chunks;
  std::size_t next_post = 0;  // chunks before it are posted (or copying out)
  bool lane_released = false;
  bool flush_waiting = false;  // on its peer's PutFlush
  bool flushed = false;        // a flush posted after all its puts has ended
  ucs_status_t flush_status = UCS_OK;
  anydev_status_t status = ANYDEV_SUCCESS;
  std::string message;
  // Progress-thread bookkeeping: the work list UCX's callbacks put it on,
  // whether it is on it, whether its stream's earlier work has completed,
  // and whether it heads its lane.
  std::vector<Transfer*>* work = nullptr;
  bool queued = false;
  bool stream_ready = false;
  bool lane_front = false;
  // Staged only: on staged_ (it has held a bounce buffer), on a
  // bounce_waiters_ queue (it found none free).
  bool in_staged = false;
  bool bounce_wait = false;
  // Parked (communicator.h): ended, while UCX still holds some of its
  // requests. It keeps its buffer, its remote key and the bounce buffers
  // those use (swapped out of the pool, which gets fresh ones).
  bool parked = false;
  std::shared_ptr<Allocation> parked_allocation;
  ucp_rkey_h parked_rkey = nullptr;
  std::vector<Communicator::Bounce> parked_bounces;
};

namespace {

// Puts `t` on the pass's work list (once).
void touch(Transfer& t) {
  if (t.queued) return;
  t.queued = true;
  t.work->push_back(&t);
}

void send_done(void* /*request*/, ucs_status_t status, void* user) {
  auto* c = static_cast<Chunk*>(user);
  c->completed = true;
  c->status = status;
  touch(*c->transfer);
}
void recv_done(void* /*request*/, ucs_status_t status, const ucp_tag_recv_info_t* info,
               void* user) {
  auto* c = static_cast<Chunk*>(user);
  c->completed = true;
  c->status = status;
  if (info != nullptr) {
    c->received = info->length;
    c->sender_tag = info->sender_tag;
  }
  touch(*c->transfer);
}
void flush_done(void* /*request*/, ucs_status_t status, void* user) {
  auto* peer = static_cast<Peer*>(user);
  peer->owner->put_flush_ended(*peer, status);
}
void endpoint_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t status) {
  auto* peer = static_cast<Peer*>(arg);
  peer->owner->peer_failed(*peer, status);
}

// Whether every chunk of `t` has gone to UCX (none waits or is still being
// staged out): a later transfer of its lane may post from then on.
bool all_posted(const Transfer& t) {
  if (t.next_post < t.chunks.size()) return false;
  for (const Chunk& c : t.chunks) {
    if (c.state == Chunk::waiting || c.state == Chunk::copying_out) return false;
  }
  return true;
}

// Lanes order the transfers with one (peer, tag, direction): a later one
// posts its chunks only after an earlier one has posted all of its own, so
// that chunks match in order. Inside passes.
using LaneKey = std::tuple<int, std::uint32_t, bool>;

}  // namespace

anydev_status_t Communicator::create(std::shared_ptr<const ContextState> context,
                                     std::uint32_t timeout_ms, std::shared_ptr<Communicator>* out) {
  constexpr const char* op = "anydev_comm_create";
  std::string reason;
  const UcxLibrary* ucx = ucx_library(&reason);
  if (ucx == nullptr)
    return fail(ANYDEV_ERROR_BACKEND_UNAVAILABLE, op, "UCX unavailable: ", reason);
  std::shared_ptr<Communicator> c(new Communicator);
  c->context_ = std::move(context);
  c->ucx_ = ucx;
  unsigned long long env_timeout = 0, env_chunk = 0, env_peer_failure = 1;
  std::string why;
  if (!read_number("ANYDEV_UCX_TIMEOUT_MS", 1, 86400000ull, 30000, &env_timeout, &why) ||
      !read_number("ANYDEV_UCX_CHUNK_BYTES", 4096, 1ull << 30, 4u << 20, &env_chunk, &why) ||
      !read_number("ANYDEV_UCX_PEER_FAILURE", 0, 1, 1, &env_peer_failure, &why)) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, why);
  }
  c->detect_peer_failure_ = env_peer_failure == 1;
  c->timeout_ms_ = timeout_ms != 0 ? timeout_ms : static_cast<std::uint32_t>(env_timeout);
  c->chunk_bytes_ = static_cast<std::size_t>(env_chunk);
  c->force_staging_ = env("ANYDEV_UCX_FORCE_STAGING").value_or("") == "1";

  ucp_config_t* config = nullptr;
  ucs_status_t s = ucx->ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) {
    return fail(ANYDEV_ERROR_BACKEND_UNAVAILABLE, op,
                "ucp_config_read failed: ", ucx->ucs_status_string(s));
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  s = ucx->ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &c->ucp_);
  ucx->ucp_config_release(config);
  if (s != UCS_OK) {
    c->ucp_ = nullptr;
    return fail(ANYDEV_ERROR_BACKEND_UNAVAILABLE, op,
                "ucp_init failed: ", ucx->ucs_status_string(s));
  }
  ucp_context_attr_t attr{};
  attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (ucx->ucp_context_query(c->ucp_, &attr) == UCS_OK) c->memory_types_ = attr.memory_types;

  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;  // every call is under ucx_mutex
  s = ucx->ucp_worker_create(c->ucp_, &wp, &c->worker_);
  if (s != UCS_OK) {
    c->worker_ = nullptr;
    return fail(ANYDEV_ERROR_DEVICE, op, "ucp_worker_create failed: ", ucx->ucs_status_string(s));
  }
  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  s = ucx->ucp_worker_get_address(c->worker_, &address, &length);
  if (s != UCS_OK) {
    return fail(ANYDEV_ERROR_DEVICE, op,
                "ucp_worker_get_address failed: ", ucx->ucs_status_string(s));
  }
  std::random_device rd;
  do {
    c->key_ = (rd() ^ static_cast<std::uint32_t>(getpid()) * 2654435761u) & 0x7fffffffu;
  } while (c->key_ == 0);
  c->address_.assign(kAddressMagic, kAddressMagic + 8);
  put_u32(c->address_, c->key_);
  put_u32(c->address_, static_cast<std::uint32_t>(getpid()));
  put_u32(c->address_, static_cast<std::uint32_t>(length));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(address);
  put_u64(c->address_, 0);  // the checksum, below
  c->address_.insert(c->address_.end(), bytes, bytes + length);
  const std::uint64_t sum = checksum(c->address_.data() + 8, 12) ^ checksum(bytes, length);
  std::memcpy(c->address_.data() + 20, &sum, 8);
  ucx->ucp_worker_release_address(c->worker_, address);

  // Idle, the progress thread sleeps until UCX's event fd or wake_fd_
  // (new work, shutdown) fires; without an event fd it polls every 1 ms.
  if (c->ucx_->ucp_worker_get_efd(c->worker_, &c->ucx_fd_) != UCS_OK) c->ucx_fd_ = -1;
  c->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  c->progress_ = std::thread([raw = c.get()] { raw->run(); });
  *out = std::move(c);
  return ANYDEV_SUCCESS;
}

Communicator::~Communicator() {
  if (progress_.joinable()) {
    {
      std::unique_lock lock(queue_mutex_);
      // Every transfer ends within its timeout (parked ones have ended):
      // this wait is bounded.
      queue_cv_.wait(lock, [&] { return in_flight_ == 0; });
      stopping_ = true;
    }
    wake();
    progress_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (ucx_ == nullptr) return;
  GateBypass bypass;
  const anydev_backend_table_t* table = context_->backend->table;
  if (worker_ != nullptr) {
    std::vector<void*> closing;
    for (auto& p : peers_) {
      if (p->ep == nullptr) continue;
      // A healthy peer's endpoint is flushed first: a send that completed
      // here may still sit in UCX's queues, and a receive's completion is
      // acknowledged to its sender only after it (rendezvous), so a force
      // close would leave the peer's transfer to end with the timeout's error.
      ucp_request_param_t rp{};
      rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      rp.flags = 0;  // flush
      if (p->failed != ANYDEV_SUCCESS) rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
      void* r = ucx_->ucp_ep_close_nbx(p->ep, &rp);
      if (r != nullptr && !UCS_PTR_IS_ERR(r)) closing.push_back(r);
    }
    // Bounded like everything else here: what UCX has not ended by then is
    // its worker's to end (ucp_worker_destroy below).
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
    for (void* r : closing) {
      while (ucx_->ucp_request_check_status(r) == UCS_INPROGRESS && Clock::now() < deadline)
        ucx_->ucp_worker_progress(worker_);
      ucx_->ucp_request_free(r);
    }
    // A force-closed endpoint to a peer whose failure UCX detects (tcp) has
    // its requests ended from a later progress: parked transfers wait for
    // that, bounded. Over shared memory they would wait in vain.
    auto detected_held = [&] {
      for (auto& [raw, t] : parked_) {
        if (!peers_[static_cast<std::size_t>(t->peer)]->detects_failure) continue;
        for (const Chunk& c : t->chunks) {
          if (c.request != nullptr && !c.completed) return true;
        }
      }
      return false;
    };
    while (detected_held() && Clock::now() < deadline) ucx_->ucp_worker_progress(worker_);
    // A flush whose puts all ended early (timed out) may still be UCX's. A
    // force-closed endpoint has ended it; one without failure detection
    // (shared memory) to a failed peer never will: left to the worker.
    for (auto& p : peers_) {
      p->puts.release(*ucx_, worker_,
                      p->detects_failure || p->failed == ANYDEV_SUCCESS ? deadline : Clock::now());
    }
    // Parked transfers: their requests go back to UCX (no callback runs
    // after that), which may still use their memory until the worker is
    // destroyed. Their remote keys belong to the worker and go before it.
    for (auto& [raw, t] : parked_) {
      for (Chunk& c : t->chunks) {
        if (c.request != nullptr) ucx_->ucp_request_free(c.request);
        c.request = nullptr;
      }
    }
    for (ucp_rkey_h rkey : orphan_rkeys_) ucx_->ucp_rkey_destroy(rkey);
    orphan_rkeys_.clear();
    parked_rkeys_.clear();
    ucx_->ucp_worker_destroy(worker_);
    worker_ = nullptr;
  }
  // Only now, with no UCX worker left to touch it, the parked memory.
  for (auto& [raw, t] : parked_) free_parked(*t);
  parked_.clear();
  unparked_.clear();
  for (Bounce& b : bounces_) {
    if (b.event != nullptr) bk(table).event_destroy(b.event);
    if (b.handle != nullptr)
      bk(table).memory_free(context_->device, ANYDEV_BK_MEMORY_HOST, b.handle);
  }
  if (staging_stream_ != nullptr) bk(table).stream_destroy(staging_stream_);
  if (ucp_ != nullptr) ucx_->ucp_cleanup(ucp_);
}

std::string Communicator::memory_types() const {
  std::string out = "host";
  if (memory_types_ & (1u << UCS_MEMORY_TYPE_CUDA)) out += ",cuda";
  if (memory_types_ & (1u << UCS_MEMORY_TYPE_ROCM)) out += ",rocm";
  return out;
}

anydev_status_t Communicator::connect(const void* bytes, std::size_t size, int* peer) {
  constexpr const char* op = "anydev_comm_connect";
  const auto* p = static_cast<const std::uint8_t*>(bytes);
  if (size < kAddressHeader || std::memcmp(p, kAddressMagic, 8) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the ", size,
                " address bytes are not an anydev communicator address (no header)");
  }
  const auto key = get<std::uint32_t>(p + 8);
  const auto pid = get<std::uint32_t>(p + 12);
  const auto length = get<std::uint32_t>(p + 16);
  if (length == 0 || size != kAddressHeader + length) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the address says ", length,
                " bytes of UCX address but ", size - kAddressHeader, " follow its header");
  }
  if (get<std::uint64_t>(p + 20) != (checksum(p + 8, 12) ^ checksum(p + kAddressHeader, length))) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                "the address bytes are damaged or forged (checksum mismatch)");
  }
  if (key == 0 || key > 0x7fffffffu) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the address carries an invalid key ", key);
  }
  std::lock_guard lock(ucx_mutex);
  if (key == key_) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                "the address is this communicator's own (connect to peers only)");
  }
  for (auto& existing : peers_) {
    if (existing->key == key) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "already connected to that address (peer ",
                  existing->index, ")");
    }
  }
  auto entry = std::make_unique<Peer>();
  entry->key = key;
  entry->owner = this;
  entry->index = static_cast<int>(peers_.size());
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(p + kAddressHeader);
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = endpoint_error;
  ep.err_handler.arg = entry.get();
  ucs_status_t s = UCS_ERR_UNREACHABLE;
  std::string refusal;
  if (detect_peer_failure_) {
    // UCX logs an ERROR before it refuses the PEER mode; that refusal is
    // expected and handled below, so its text goes to anydev's debug log.
    const UcxLogCapture quiet(*ucx_);
    s = ucx_->ucp_ep_create(worker_, &ep, &entry->ep);
    refusal = quiet.text();
  }
  if (s == UCS_ERR_UNREACHABLE) {
    // Not asked for (ANYDEV_UCX_PEER_FAILURE=0), or refused by transports
    // without it (UCX 1.13's shared memory): connect without it; a dead
    // peer is then found by the timeout alone.
    ep.field_mask &= ~static_cast<std::uint64_t>(UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                                 UCP_EP_PARAM_FIELD_ERR_HANDLER);
    s = ucx_->ucp_ep_create(worker_, &ep, &entry->ep);
    entry->detects_failure = false;
    if (s == UCS_OK && detect_peer_failure_ && log_enabled(ANYDEV_LOG_DEBUG)) {
      log(ANYDEV_LOG_DEBUG, std::string(op) + ": peer " + std::to_string(entry->index) +
                                ": no transport detects peer failure, connected without it (a "
                                "dead peer is found by the timeout)" +
                                (refusal.empty() ? "" : "; UCX said: " + refusal));
    }
  } else if (!refusal.empty()) {
    log(ANYDEV_LOG_WARN, std::string(op) + ": UCX: " + refusal);
  }
  if (s != UCS_OK) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "UCX rejected the address of process ", pid,
                ": ", ucx_->ucs_status_string(s), " (another UCX_TLS, or no transport reaches it)");
  }
  *peer = entry->index;
  peers_.push_back(std::move(entry));
  connected_.store(static_cast<int>(peers_.size()), std::memory_order_release);
  return ANYDEV_SUCCESS;
}

int Communicator::peer_count() { return connected_.load(std::memory_order_acquire); }

void Communicator::peer_failed(Peer& peer, ucs_status_t status) {
  // Under ucx_mutex (inside a pass).
  if (peer.failed != ANYDEV_SUCCESS) return;
  peer.failed = ANYDEV_ERROR_DEVICE;
  peer.failed_at = std::chrono::steady_clock::now();
  peer.why = std::string("the connection to peer ") + std::to_string(peer.index) +
             " failed: " + ucx_->ucs_status_string(status) + " (the peer died or is unreachable)";
}

bool Communicator::direct(const Allocation& allocation, const anydev_buffer_s& handle,
                          ucs_memory_type_t* type) const {
  *type = UCS_MEMORY_TYPE_HOST;
  if (allocation.address == nullptr) return false;
  if (handle.kind == ANYDEV_MEMORY_HOST || allocation.kind == ANYDEV_BK_MEMORY_USER_HOST) {
    return true;
  }
  if (force_staging_) return false;
  const Backend* backend = allocation.backend;
  const auto d = static_cast<std::size_t>(allocation.device);
  if (d >= backend->devices.size()) return false;
  const DeviceRecord& record = backend->devices[d];
  if (record.device_memory_is_host_accessible) return true;
  // Device pointers go to UCX as they are where UCX supports their type.
  if (record.dlpack_device_type == 2 && (memory_types_ & (1u << UCS_MEMORY_TYPE_CUDA))) {
    *type = UCS_MEMORY_TYPE_CUDA;
    return true;
  }
  if (record.dlpack_device_type == 10 && (memory_types_ & (1u << UCS_MEMORY_TYPE_ROCM))) {
    *type = UCS_MEMORY_TYPE_ROCM;
    return true;
  }
  return false;
}

anydev_status_t Communicator::ensure_staging() {
  // Under ucx_mutex.
  if (staging_stream_ != nullptr) return ANYDEV_SUCCESS;
  GateBypass bypass;
  const anydev_backend_table_t* table = context_->backend->table;
  const int device = context_->device;
  anydev_bk_stream_t stream = nullptr;
  if (anydev_status_t s = bk(table).stream_create(device, &stream); s != ANYDEV_SUCCESS) return s;
  std::vector<Bounce> bounces(static_cast<std::size_t>(bounce_count_));
  anydev_status_t status = ANYDEV_SUCCESS;
  for (Bounce& b : bounces) {
    status = bk(table).host_alloc(device, chunk_bytes_, &b.handle, &b.address);
    if (status != ANYDEV_SUCCESS) break;
    status = bk(table).event_create(device, &b.event);
    if (status != ANYDEV_SUCCESS) break;
  }
  if (status != ANYDEV_SUCCESS) {
    for (Bounce& b : bounces) {
      if (b.event != nullptr) bk(table).event_destroy(b.event);
      if (b.handle != nullptr) bk(table).memory_free(device, ANYDEV_BK_MEMORY_HOST, b.handle);
    }
    bk(table).stream_destroy(stream);
    return status;
  }
  bounces_ = std::move(bounces);
  staging_stream_ = stream;
  return ANYDEV_SUCCESS;
}

anydev_status_t Communicator::enqueue(TransferKind kind, anydev_buffer_t buffer, int peer,
                                      std::uint32_t tag, std::shared_ptr<RemoteRegion> remote,
                                      std::size_t remote_offset) {
  const char* op = kind_name(kind);
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buffer, "buffer", &view); s != ANYDEV_SUCCESS) return s;
  if (view.context->backend != context_->backend || view.context->device != context_->device) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the buffer belongs to ",
                view.context->backend->name, " device ", view.context->device,
                "; the communicator to ", context_->backend->name, " device ", context_->device);
  }
  auto t = std::make_shared<Transfer>();
  t->kind = kind;
  t->tag = tag;
  t->context = view.context;
  t->allocation = view.allocation;
  t->ref = view.ref();
  t->address = view.address();
  t->bytes = buffer->size_bytes;
  t->staged = !direct(*view.allocation, *buffer, &t->memory_type);
  if (remote) {
    peer = remote->peer;
    if (remote->comm.get() != this) {
      return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                  "the remote region was imported by another communicator");
    }
    if (remote_offset > remote->bytes || t->bytes > remote->bytes - remote_offset) {
      return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, t->bytes, " bytes at offset ", remote_offset,
                  " do not fit the peer's exposed region of ", remote->bytes, " bytes");
    }
  }
  t->peer = peer;
  t->remote = std::move(remote);
  t->remote_offset = remote_offset;
  if (const int connected = connected_.load(std::memory_order_acquire);
      peer < 0 || peer >= connected) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "peer ", peer, " is not connected (", connected,
                " peers)");
  }
  if (t->staged) {
    std::lock_guard lock(ucx_mutex);
    if (anydev_status_t s = ensure_staging(); s != ANYDEV_SUCCESS) return s;
  }
  const std::size_t n = t->bytes == 0 ? 1 : (t->bytes + chunk_bytes_ - 1) / chunk_bytes_;
  t->chunks.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Chunk& c = t->chunks[i];
    c.transfer = t.get();
    c.offset = i * chunk_bytes_;
    c.bytes = std::min(chunk_bytes_, t->bytes - c.offset);
    c.last = i + 1 == n;
  }
  // Orders the transfer after the work already on the buffer's stream (and
  // the buffer's last user's stream): an event the passes query.
  Stream& stream = *view.context->stream;
  const anydev_backend_table_t* table = stream.table;
  {
    GateBypass bypass;
    if (anydev_status_t s = bk(table).event_create(stream.device, &t->ready); s != ANYDEV_SUCCESS) {
      return s;
    }
    Allocation* const allocations[] = {view.allocation.get()};
    const anydev_status_t s =
        use_allocations(StreamUse{&stream, &view.context->stream}, allocations,
                        [&] { return bk(table).event_record(t->ready, stream.native); });
    if (s != ANYDEV_SUCCESS) {
      bk(table).event_destroy(t->ready);
      return s;
    }
  }
  gate_open(stream.native, weak_from_this());
  bool asleep = false;
  {
    std::lock_guard lock(queue_mutex_);
    submitted_.push_back(std::move(t));
    has_submitted_.store(true, std::memory_order_release);
    ++in_flight_;
    // A driving caller's thread takes it in its next pass, and wakes the
    // progress thread when it stops if work is left.
    asleep = sleeping_ && driving_.load(std::memory_order_acquire) == 0;
  }
  // An awake progress thread sees the queue on its next pass: no syscall.
  if (asleep) wake();
  return ANYDEV_SUCCESS;
}

void Communicator::post_chunk(Transfer& t, Chunk& c) {
  // Inside a pass, under ucx_mutex.
  Peer& peer = *peers_[static_cast<std::size_t>(t.peer)];
  void* where = c.bounce >= 0 ? bounces_[static_cast<std::size_t>(c.bounce)].address
                              : static_cast<char*>(t.address) + c.offset;
  // Immediate completion is allowed for sends, puts and gets: a small send
  // then ends in this pass with no further progress call (over tcp each is
  // a system call).
  ucp_request_param_t rp{};
  rp.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  rp.user_data = &c;
  rp.memory_type = c.bounce >= 0 ? UCS_MEMORY_TYPE_HOST : t.memory_type;
  void* r = nullptr;
  if (peer.ep == nullptr && t.kind != TransferKind::recv) {
    // Closed after a transfer to it timed out (a staged chunk whose copy
    // ended since): fails like the endpoint's other requests.
    c.state = Chunk::posted;
    c.completed = true;
    c.status = UCS_ERR_NOT_CONNECTED;
    touch(t);
    return;
  }
  if ((t.kind == TransferKind::put || t.kind == TransferKind::get) && c.bytes == 0) {
    // Nothing to move (UCX never completes a zero-byte put or get).
    c.state = Chunk::posted;
    c.completed = true;
    c.status = UCS_OK;
    touch(t);  // no callback will: this pass harvests it
    return;
  }
  switch (t.kind) {
    case TransferKind::send:
      rp.cb.send = send_done;
      r = ucx_->ucp_tag_send_nbx(peer.ep, where, c.bytes, wire_tag(key_, t.tag, c.last), &rp);
      break;
    case TransferKind::recv:
      rp.cb.recv = recv_done;
      // UCX 1.13 leaves recv_info unfilled on an immediate completion: the
      // callback reports the size and tag (UCX calls it inside this call
      // when the message is already here).
      rp.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
      r = ucx_->ucp_tag_recv_nbx(worker_, where, c.bytes, wire_tag(peer.key, t.tag, false),
                                 ~kLastChunk, &rp);
      break;
    case TransferKind::put:
    case TransferKind::get:
      rp.cb.send = send_done;
      if (t.kind == TransferKind::put) {
        r = ucx_->ucp_put_nbx(peer.ep, where, c.bytes,
                              t.remote->address + t.remote_offset + c.offset, t.remote->rkey, &rp);
      } else {
        r = ucx_->ucp_get_nbx(peer.ep, where, c.bytes,
                              t.remote->address + t.remote_offset + c.offset, t.remote->rkey, &rp);
      }
      break;
  }
  c.state = Chunk::posted;
  if (UCS_PTR_IS_ERR(r)) {
    c.completed = true;
    c.status = UCS_PTR_STATUS(r);
    touch(t);  // no callback will: this pass harvests it
  } else if (r == nullptr) {
    // Done at once: no callback follows.
    c.completed = true;
    c.status = UCS_OK;
    touch(t);
  } else {
    c.request = r;
  }
}

void Communicator::put_flush_ended(Peer& peer, ucs_status_t status) {
  // Inside progress (or a close) in a pass, under ucx_mutex.
  peer.puts.ended(status);
  flushed_.push_back(&peer);
}

void Communicator::start_flush(Peer& peer) {
  // Inside a pass, under ucx_mutex.
  if (!peer.puts.needs_flush()) return;
  peer.puts.start(*ucx_, peer.ep, flush_done, &peer);
  if (peer.puts.has_ended()) flushed_.push_back(&peer);
}

void Communicator::settle_flushes() {
  // Inside a pass, under ucx_mutex: frees each ended flush, ends the puts
  // it covered and starts the next flush for the puts posted since.
  while (!flushed_.empty()) {
    std::vector<Peer*> peers;
    peers.swap(flushed_);
    for (Peer* peer : peers) {
      peer->puts.settle(*ucx_, [](void* waiter, ucs_status_t status) {
        auto& t = *static_cast<Transfer*>(waiter);
        t.flush_waiting = false;
        t.flushed = true;
        t.flush_status = status;
        touch(t);
      });
      start_flush(*peer);
    }
  }
}

void Communicator::park(Transfer& t) {
  // Inside a pass, under ucx_mutex. The bounce buffers its posted chunks
  // use stay with it; the pool gets fresh ones (else a few stalled staged
  // transfers would starve every later one), or keeps the slot busy.
  GateBypass bypass;
  const anydev_backend_table_t* table = context_->backend->table;
  for (Chunk& c : t.chunks) {
    if (c.bounce < 0) continue;
    Bounce& slot = bounces_[static_cast<std::size_t>(c.bounce)];
    if (c.state != Chunk::posted || c.request == nullptr) {
      slot.busy = false;
      c.bounce = -1;
      continue;
    }
    Bounce fresh;
    if (bk(table).host_alloc(context_->device, chunk_bytes_, &fresh.handle, &fresh.address) !=
            ANYDEV_SUCCESS ||
        bk(table).event_create(context_->device, &fresh.event) != ANYDEV_SUCCESS) {
      if (fresh.handle != nullptr)
        bk(table).memory_free(context_->device, ANYDEV_BK_MEMORY_HOST, fresh.handle);
      continue;  // the slot stays busy until the transfer is let go of
    }
    t.parked_bounces.push_back(slot);
    slot = fresh;
    c.bounce = -1;
  }
  if (t.remote) {
    t.parked_rkey = t.remote->rkey;
    parked_rkeys_.push_back(t.parked_rkey);
  }
  // pass() drops the transfer's allocation and remote region when it ends:
  // the parked list keeps the buffer (not the region: it holds this).
  t.parked_allocation = std::move(t.allocation);
  t.parked = true;
  parked_.emplace(&t, t.shared_from_this());
}

bool Communicator::parked_touched(Transfer* raw) {
  // Inside a pass, under ucx_mutex: `raw`, if parked, was touched by a
  // UCX callback. Once UCX has ended every request of it, it is let go of.
  auto found = parked_.find(raw);
  if (found == parked_.end()) return false;
  Transfer& t = *raw;
  t.queued = false;
  for (Chunk& c : t.chunks) {
    if (c.request == nullptr) continue;
    if (!c.completed) return true;
  }
  for (Chunk& c : t.chunks) {
    if (c.request != nullptr) ucx_->ucp_request_free(c.request);
    c.request = nullptr;
  }
  if (t.parked_rkey != nullptr) {
    parked_rkeys_.erase(std::find(parked_rkeys_.begin(), parked_rkeys_.end(), t.parked_rkey));
    auto orphan = std::find(orphan_rkeys_.begin(), orphan_rkeys_.end(), t.parked_rkey);
    if (orphan != orphan_rkeys_.end() && std::find(parked_rkeys_.begin(), parked_rkeys_.end(),
                                                   t.parked_rkey) == parked_rkeys_.end()) {
      ucx_->ucp_rkey_destroy(t.parked_rkey);
      orphan_rkeys_.erase(orphan);
    }
    t.parked_rkey = nullptr;
  }
  free_parked(t);
  unparked_.push_back(std::move(found->second));
  parked_.erase(found);
  return true;
}

void Communicator::free_parked(Transfer& t) {
  // Once UCX has let go of `t` (its requests ended, or the worker is gone).
  GateBypass bypass;
  const anydev_backend_table_t* table = context_->backend->table;
  for (Chunk& c : t.chunks) {
    if (c.bounce < 0) continue;
    bounces_[static_cast<std::size_t>(c.bounce)].busy = false;
    c.bounce = -1;
  }
  for (Bounce& b : t.parked_bounces) {
    if (b.event != nullptr) bk(table).event_destroy(b.event);
    bk(table).memory_free(context_->device, ANYDEV_BK_MEMORY_HOST, b.handle);
  }
  t.parked_bounces.clear();
}

void Communicator::release_rkey(ucp_rkey_h rkey) {
  std::lock_guard lock(ucx_mutex);
  if (std::find(parked_rkeys_.begin(), parked_rkeys_.end(), rkey) != parked_rkeys_.end()) {
    orphan_rkeys_.push_back(rkey);  // destroyed once its parked transfers end, or with the worker
    return;
  }
  ucx_->ucp_rkey_destroy(rkey);
}

void Communicator::finish(Transfer& t, anydev_status_t status, std::string message) {
  if (t.status == ANYDEV_SUCCESS && status != ANYDEV_SUCCESS) {
    t.status = status;
    t.message = std::string(kind_name(t.kind)) + ": " + message;
  }
}

// Moves `t` on as far as it can go; true when it has ended. Inside a
// pass, under ucx_mutex.
bool Communicator::advance(Transfer& t) {
  GateBypass bypass;
  const anydev_backend_table_t* table = context_->backend->table;
  Peer& peer = *peers_[static_cast<std::size_t>(t.peer)];
  if (t.phase == Transfer::waiting_stream) {
    // Its stream's earlier work has completed (run() checked): it starts.
    t.phase = Transfer::running;
    t.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  }
  const bool out = outbound(t.kind);
  // Harvest completions. Staged chunks go to UCX strictly in order: a
  // chunk whose copy finished is not posted before an earlier one whose copy
  // has not (the receiver matches them in order).
  bool earlier_unposted = false;
  for (Chunk& c : t.chunks) {
    if (c.state == Chunk::copying_out && earlier_unposted) continue;
    if (c.state == Chunk::copying_out || c.state == Chunk::copying_in) {
      Bounce& b = bounces_[static_cast<std::size_t>(c.bounce)];
      int complete = 0;
      if (bk(table).event_query(b.event, &complete) != ANYDEV_SUCCESS) {
        finish(t, ANYDEV_ERROR_DEVICE, "a staging copy failed");
        complete = 1;
        c.state = out ? Chunk::done : c.state;
      }
      if (complete == 0) {
        if (c.state == Chunk::copying_out) earlier_unposted = true;
        continue;
      }
      if (c.state == Chunk::copying_out) {
        if (t.phase == Transfer::running) {
          post_chunk(t, c);
        } else {
          c.state = Chunk::done;
        }
      } else {
        c.state = Chunk::done;
      }
      if (c.state == Chunk::done) {
        b.busy = false;
        c.bounce = -1;
      }
    }
    if (c.state == Chunk::posted && c.completed) {
      if (c.request != nullptr) {
        ucx_->ucp_request_free(c.request);
        c.request = nullptr;
      }
      if (c.status == UCS_ERR_MESSAGE_TRUNCATED) {
        finish(t, ANYDEV_ERROR_DEVICE,
               "the message with tag " + std::to_string(t.tag) + " from peer " +
                   std::to_string(t.peer) + " is larger than the " + std::to_string(t.bytes) +
                   "-byte buffer (truncated; nothing more of it is delivered)");
      } else if (c.status == UCS_ERR_CANCELED) {
        // Cancelled below after an error or the timeout: reported there.
      } else if (c.status != UCS_OK) {
        finish(t, ANYDEV_ERROR_DEVICE,
               peer.failed != ANYDEV_SUCCESS
                   ? peer.why
                   : std::string("UCX failed the transfer to/from peer ") + std::to_string(t.peer) +
                         ": " + ucx_->ucs_status_string(c.status));
      } else if (t.kind == TransferKind::recv &&
                 (c.received != c.bytes || ((c.sender_tag & kLastChunk) != 0) != c.last)) {
        finish(t, ANYDEV_ERROR_DEVICE,
               "the message with tag " + std::to_string(t.tag) + " from peer " +
                   std::to_string(t.peer) + " differs in size from the " + std::to_string(t.bytes) +
                   "-byte buffer (sender and receiver must agree)");
      }
      if (c.bounce >= 0 && !out && t.status == ANYDEV_SUCCESS && c.status == UCS_OK) {
        Bounce& b = bounces_[static_cast<std::size_t>(c.bounce)];
        anydev_bk_memory_ref_t dst = t.ref;
        dst.offset += c.offset;
        const anydev_bk_memory_ref_t src{b.handle, 0, ANYDEV_BK_MEMORY_HOST, context_->device};
        if (bk(table).copy(staging_stream_, dst, src, c.bytes) != ANYDEV_SUCCESS ||
            bk(table).event_record(b.event, staging_stream_) != ANYDEV_SUCCESS) {
          finish(t, ANYDEV_ERROR_DEVICE, "the staging copy into device memory failed");
          c.state = Chunk::done;
        } else {
          c.state = Chunk::copying_in;
        }
      } else {
        c.state = Chunk::done;
      }
      if (c.state == Chunk::done && c.bounce >= 0) {
        bounces_[static_cast<std::size_t>(c.bounce)].busy = false;
        c.bounce = -1;
      }
    }
  }
  if (t.status != ANYDEV_SUCCESS && t.phase == Transfer::running) t.phase = Transfer::draining;
  // A receive may still match a message that arrived before its sender
  // died (UCX holds it as unexpected): it fails only once its chunks are
  // posted and a grace period has passed since the failure.
  if (t.phase == Transfer::running && peer.failed != ANYDEV_SUCCESS &&
      (t.kind != TransferKind::recv ||
       (all_posted(t) && Clock::now() - peer.failed_at > std::chrono::milliseconds(200)))) {
    finish(t, peer.failed, peer.why);
    t.phase = Transfer::draining;
  }
  if ((t.phase == Transfer::running || t.phase == Transfer::flushing) &&
      Clock::now() > t.deadline) {
    std::string what =
        t.kind == TransferKind::recv
            ? "no message with tag " + std::to_string(t.tag) + " from peer " +
                  std::to_string(t.peer) + " completed"
            : "the transfer to/from peer " + std::to_string(t.peer) + " did not complete";
    finish(t, ANYDEV_ERROR_DEVICE,
           what + " within " + std::to_string(timeout_ms_) + " ms (ANYDEV_UCX_TIMEOUT_MS)");
    if (t.kind != TransferKind::recv && peer.failed == ANYDEV_SUCCESS) {
      // An outbound request cannot be cancelled: closing the endpoint ends
      // it (with an error), and the peer is unusable from now on.
      peer.failed = ANYDEV_ERROR_DEVICE;
      peer.failed_at = Clock::now();
      peer.why =
          "peer " + std::to_string(t.peer) + " was disconnected after a transfer to it timed out";
      ucp_request_param_t rp{};
      rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
      void* r = ucx_->ucp_ep_close_nbx(peer.ep, &rp);
      if (r != nullptr && !UCS_PTR_IS_ERR(r)) {
        while (ucx_->ucp_request_check_status(r) == UCS_INPROGRESS) {
          ucx_->ucp_worker_progress(worker_);
        }
        ucx_->ucp_request_free(r);
      }
      peer.ep = nullptr;
    }
    t.phase = Transfer::draining;
  }
  if (t.phase == Transfer::draining) {
    // Cancel what UCX still holds (receives can be cancelled until they
    // match; sends, puts and gets end when their endpoint fails or closes),
    // then wait for it.
    bool held = false;     // requests UCX has not ended
    bool copying = false;  // staging copies (they always end)
    for (Chunk& c : t.chunks) {
      if (c.state == Chunk::posted && !c.completed && c.request != nullptr &&
          t.kind == TransferKind::recv) {
        ucx_->ucp_request_cancel(worker_, c.request);
      }
      if (c.state == Chunk::posted && c.completed && c.request != nullptr) {
        // Completed since the harvest above (the endpoint's close ends
        // outbound requests): returned to UCX, which reports it otherwise.
        ucx_->ucp_request_free(c.request);
        c.request = nullptr;
      }
      if (c.state == Chunk::posted && !c.completed && c.request != nullptr) held = true;
      if (c.state == Chunk::copying_in || c.state == Chunk::copying_out) copying = true;
    }
    if (t.flush_waiting) {
      // The flush is the peer's: it ends (and is freed) without this put.
      peer.puts.forget(&t);
      t.flush_waiting = false;
    }
    if (!held && !copying) {
      t.phase = Transfer::finished;
    } else if (held && !copying && (peer.failed != ANYDEV_SUCCESS || Clock::now() > t.deadline)) {
      // UCX may never end these (over shared memory nothing ends the
      // outbound requests to a stalled peer, nor a receive it has begun):
      // the transfer ends now and its memory stays parked until they end.
      park(t);
      t.phase = Transfer::finished;
    }
    return t.phase == Transfer::finished;
  }
  if (t.phase == Transfer::running) {
    // Post (or start staging) the chunks in order.
    // Staged: at most two bounce buffers per transfer, from the outbound or
    // the inbound half of the pool (a receive waiting for its message never
    // holds back a send).
    int holding = 0;
    for (const Chunk& c : t.chunks) holding += c.bounce >= 0 ? 1 : 0;
    const std::size_t half = bounces_.size() / 2;
    while (t.next_post < t.chunks.size()) {
      Chunk& c = t.chunks[t.next_post];
      if (t.staged) {
        if (holding >= 2) break;
        int free_slot = -1;
        for (std::size_t i = out ? 0 : half; i < (out ? half : bounces_.size()); ++i) {
          if (!bounces_[i].busy) {
            free_slot = static_cast<int>(i);
            break;
          }
        }
        if (free_slot < 0) {
          if (!t.bounce_wait) {
            t.bounce_wait = true;
            bounce_waiters_[out ? 0 : 1].push_back(&t);
          }
          break;
        }
        if (!t.in_staged) {
          // Its time starts with its first bounce buffer: one queued behind
          // others' staging has not started yet (those end in time, or are
          // parked with fresh buffers put in their place).
          t.in_staged = true;
          staged_.push_back(&t);
          t.deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
        }
        Bounce& b = bounces_[static_cast<std::size_t>(free_slot)];
        b.busy = true;
        c.bounce = free_slot;
        ++holding;
        if (out && c.bytes > 0) {
          anydev_bk_memory_ref_t src = t.ref;
          src.offset += c.offset;
          const anydev_bk_memory_ref_t dst{b.handle, 0, ANYDEV_BK_MEMORY_HOST, context_->device};
          if (bk(table).copy(staging_stream_, dst, src, c.bytes) != ANYDEV_SUCCESS ||
              bk(table).event_record(b.event, staging_stream_) != ANYDEV_SUCCESS) {
            b.busy = false;
            c.bounce = -1;
            finish(t, ANYDEV_ERROR_DEVICE, "the staging copy out of device memory failed");
            t.phase = Transfer::draining;
            return false;
          }
          c.state = Chunk::copying_out;
        } else {
          post_chunk(t, c);
        }
      } else {
        post_chunk(t, c);
      }
      ++t.next_post;
    }
    bool all_done = true;
    for (const Chunk& c : t.chunks) all_done = all_done && c.state == Chunk::done;
    if (all_done && t.next_post == t.chunks.size()) {
      if (t.kind == TransferKind::put && t.bytes > 0) {
        // Remote completion: an endpoint flush posted once all its puts
        // have completed locally (not while UCX still queues them), shared
        // with every other put to this peer that completed before it.
        peer.puts.wait(&t);
        t.flush_waiting = true;
        start_flush(peer);
        t.phase = Transfer::flushing;
      } else {
        t.phase = Transfer::finished;
      }
    }
  }
  if (t.phase == Transfer::flushing) {
    if (!t.flushed) return false;
    if (t.flush_status != UCS_OK) {
      finish(t, ANYDEV_ERROR_DEVICE,
             peer.failed != ANYDEV_SUCCESS ? peer.why
                                           : std::string("flushing the put failed: ") +
                                                 ucx_->ucs_status_string(t.flush_status));
    }
    t.phase = Transfer::finished;
  }
  return t.phase == Transfer::finished;
}

int Communicator::pass() {
  // Only the transfers that can move are advanced: those a UCX callback
  // touched, those whose stream became ready, a lane's new head, staged ones
  // (their copies are polled), and, every few milliseconds, those past their
  // deadline or whose peer failed. Thousands may be in flight.
  constexpr auto kScanPeriod = std::chrono::milliseconds(2);
  constexpr std::size_t kKeptQueues = 64;
  std::vector<std::shared_ptr<Transfer>> ended;
  std::vector<std::shared_ptr<Transfer>> unparked;  // UCX let go of them
  int progressed = 0;
  {
    std::lock_guard lock(ucx_mutex);
    GateBypass bypass;
    if (has_submitted_.load(std::memory_order_acquire)) {
      std::lock_guard queue_lock(queue_mutex_);
      has_submitted_.store(false, std::memory_order_relaxed);
      while (!submitted_.empty()) {
        std::shared_ptr<Transfer> t = std::move(submitted_.front());
        submitted_.pop_front();
        t->work = &work_;
        if (t->kind == TransferKind::send || t->kind == TransferKind::recv) {
          auto& lane = lanes_[LaneKey{t->peer, t->tag, t->kind == TransferKind::send}];
          t->lane_front = lane.empty();
          lane.push_back(t.get());
        } else {
          t->lane_released = true;
        }
        waiting_[t->context->stream->native].push_back(t.get());
        active_.emplace(t.get(), std::move(t));
      }
    }
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      std::deque<Transfer*>& queue = it->second;
      while (!queue.empty()) {
        Transfer& t = *queue.front();
        int complete = 0;
        if (bk(t.context->stream->table).event_query(t.ready, &complete) != ANYDEV_SUCCESS) {
          finish(t, ANYDEV_ERROR_DEVICE, "the work before it on the stream failed");
          t.phase = Transfer::draining;
        } else if (complete == 0) {
          break;
        }
        t.stream_ready = true;
        touch(t);
        queue.pop_front();
      }
      ++it;
    }
    // Empty queues and lanes are kept for the next message (a deque's
    // first block is an allocation) while they are few.
    if (waiting_.size() > kKeptQueues)
      std::erase_if(waiting_, [](auto& e) { return e.second.empty(); });
    // Staged transfers holding bounce buffers poll their copies; those
    // waiting for a buffer are woken, oldest first, one per free buffer.
    // Neither list grows with the transfers queued behind them.
    for (Transfer* t : staged_) touch(*t);
    if (!bounce_waiters_[0].empty() || !bounce_waiters_[1].empty()) {
      const std::size_t half = bounces_.size() / 2;
      for (int in = 0; in < 2; ++in) {
        std::size_t free_slots = 0;
        for (std::size_t i = in == 0 ? 0 : half; i < (in == 0 ? half : bounces_.size()); ++i) {
          free_slots += bounces_[i].busy ? 0 : 1;
        }
        std::deque<Transfer*>& waiters = bounce_waiters_[in];
        for (; free_slots > 0 && !waiters.empty(); --free_slots) {
          Transfer& t = *waiters.front();
          waiters.pop_front();
          t.bounce_wait = false;
          touch(t);
        }
      }
    }
    // The clock is read every few passes only: a read can cost as much as
    // an empty pass.
    constexpr unsigned kPassesPerClockRead = 16;
    if (++scan_tick_ % kPassesPerClockRead == 0) {
      const Clock::time_point now = Clock::now();
      if (now >= next_scan_) {
        next_scan_ = now + kScanPeriod;
        for (auto& [raw, t] : active_) {
          // A transfer queued behind its lane's head has no deadline yet.
          if (t->stream_ready &&
              ((t->phase != Transfer::waiting_stream && now > t->deadline) ||
               peers_[static_cast<std::size_t>(t->peer)]->failed != ANYDEV_SUCCESS)) {
            touch(*raw);
          }
        }
      }
    }
    const auto run_round = [&] {
      pass_work_.swap(work_);
      for (Transfer* raw : pass_work_) {
        if (!parked_.empty() && parked_touched(raw)) continue;
        auto found = active_.find(raw);
        if (found == active_.end()) continue;  // ended earlier in this pass
        Transfer& t = *raw;
        t.queued = false;
        if (!t.stream_ready || (!t.lane_released && !t.lane_front)) continue;
        const bool ended_now = advance(t);
        if (!t.lane_released && (ended_now || all_posted(t))) {
          const LaneKey lane_key{t.peer, t.tag, t.kind == TransferKind::send};
          std::deque<Transfer*>& lane = lanes_[lane_key];
          lane.pop_front();
          t.lane_released = true;
          if (!lane.empty()) {
            lane.front()->lane_front = true;
            touch(*lane.front());
          }
        }
        if (ended_now) {
          if (t.in_staged) staged_.erase(std::find(staged_.begin(), staged_.end(), raw));
          if (t.bounce_wait) {
            std::deque<Transfer*>& waiters = bounce_waiters_[outbound(t.kind) ? 0 : 1];
            waiters.erase(std::find(waiters.begin(), waiters.end(), raw));
          }
          ended.push_back(std::move(found->second));
          active_.erase(found);
        }
      }
      pass_work_.clear();
    };
    // What can move without UCX goes first: a new send leaves before the
    // poll (over tcp a system call), not after it.
    run_round();
    progressed = static_cast<int>(ucx_->ucp_worker_progress(worker_));
    settle_flushes();
    // Then what the poll completed, and once more what that made ready
    // without UCX: chunks completed as they were posted, a lane's next head.
    for (int round = 0; round < 2 && !work_.empty(); ++round) run_round();
    unparked.swap(unparked_);
    if (lanes_.size() > kKeptQueues)
      std::erase_if(lanes_, [](auto& e) { return e.second.empty(); });
    settle_flushes();
  }
  if (!unparked.empty()) {
    GateBypass bypass;  // their buffers are freed like those of transfers that end
    unparked.clear();
  }
  for (auto& t : ended) {
    GateBypass bypass;
    bk(t->context->stream->table).event_destroy(t->ready);
    gate_close(t->context->stream->native, t->status, t->message);
    t->allocation.reset();
    // A remote region's last reference may hold the communicator's last
    // one: release it off this thread, which the destructor joins.
    if (t->remote && t->remote.use_count() == 1) {
      std::thread([r = std::move(t->remote)]() mutable { r.reset(); }).detach();
    }
    t->remote.reset();
  }
  if (!ended.empty()) {
    {
      std::lock_guard lock(queue_mutex_);
      in_flight_ -= ended.size();
    }
    queue_cv_.notify_all();
  }
  return progressed + static_cast<int>(ended.size());
}

void Communicator::run() {
  int empty_polls = 0;
  // Idle, the thread keeps polling until this long after the last activity
  // before it sleeps: the next message of a ping-pong, or the next of a
  // peer's stream of emulated puts into exposed memory, then costs no
  // sleep and wake-up. Bounded, so an idle communicator burns no core.
  constexpr auto kLinger = std::chrono::microseconds(500);
  Clock::time_point linger_until{};
  for (;;) {
    bool busy = false;
    {
      std::unique_lock lock(queue_mutex_);
      if (driving_.load(std::memory_order_acquire) != 0) {
        // A caller's thread makes the passes: stand aside (bounded, so a
        // missed notification costs at most this long).
        driver_cv_.wait_for(lock, std::chrono::milliseconds(1),
                            [&] { return driving_.load(std::memory_order_acquire) == 0; });
        linger_until = Clock::now() + kLinger;
        continue;
      }
      if (in_flight_ == 0 && stopping_) break;
      if (in_flight_ == 0 && Clock::now() >= linger_until) {
        // Idle: sleep until UCX has an event (peers' puts and gets into
        // exposed memory need this worker's progress on transports
        // without hardware RMA) or new work arrives.
        sleeping_ = true;
        lock.unlock();
        idle_wait();
        lock.lock();
        sleeping_ = false;
      }
      busy = in_flight_ != 0;
    }
    const int progressed = pass();
    // Busy-poll while transfers are in flight, as ucx_perftest does; yield
    // only after a long run of empty polls (a yield on a loaded machine can
    // cost a whole time slice per UCX round trip).
    if (progressed > 0 || busy) linger_until = Clock::now() + kLinger;
    empty_polls = progressed == 0 ? empty_polls + 1 : 0;
    if (empty_polls >= 4096) {
      empty_polls = 0;
      std::this_thread::yield();
    }
  }
}

bool Communicator::drive(const std::function<bool()>& done) {
  int expected = 0;
  if (!driving_.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return false;
  int empty_polls = 0;
  while (!done()) {
    empty_polls = pass() == 0 ? empty_polls + 1 : 0;
    if (empty_polls >= 4096) {
      empty_polls = 0;
      std::this_thread::yield();
    }
  }
  // Transfers still in flight (other streams') go back to the progress
  // thread; with none, it finds out by itself (its stand-aside is bounded),
  // which spares a ping-pong's every round a wake-up call.
  bool others = false, asleep = false;
  {
    std::lock_guard lock(queue_mutex_);
    driving_.store(0, std::memory_order_release);
    others = in_flight_ != 0;
    asleep = sleeping_;
  }
  if (others) {
    driver_cv_.notify_all();
    if (asleep) wake();
  }
  return true;
}

void Communicator::wake() {
  const std::uint64_t one = 1;
  if (wake_fd_ < 0 || ::write(wake_fd_, &one, sizeof one) != sizeof one) queue_cv_.notify_all();
}

void Communicator::idle_wait() {
  ucs_status_t armed = UCS_ERR_UNSUPPORTED;
  if (ucx_fd_ >= 0 && wake_fd_ >= 0) {
    std::lock_guard lock(ucx_mutex);
    // Progress first: arming fails (busy) while events are pending.
    while (ucx_->ucp_worker_progress(worker_) != 0) {
    }
    armed = ucx_->ucp_worker_arm(worker_);
  }
  if (armed == UCS_ERR_BUSY) return;
  if (armed != UCS_OK) {
    std::unique_lock lock(queue_mutex_);
    queue_cv_.wait_for(lock, std::chrono::milliseconds(1));
    return;
  }
  pollfd fds[2] = {{ucx_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  // Bounded, so that a missed wake-up costs at most this long.
  ::poll(fds, 2, 100);
  std::uint64_t count = 0;
  if ((fds[1].revents & POLLIN) != 0) {
    [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof count);
  }
}

anydev_status_t Communicator::expose(anydev_buffer_t buffer, std::shared_ptr<ExposedRegion>* out) {
  constexpr const char* op = "anydev_comm_expose";
  BufferView view;
  if (anydev_status_t s = access_buffer(op, buffer, "buffer", &view); s != ANYDEV_SUCCESS) return s;
  ucs_memory_type_t type;
  if (!direct(*view.allocation, *buffer, &type)) {
    return fail(ANYDEV_ERROR_UNSUPPORTED, op, "UCX cannot reach ", view.context->backend->name,
                " device memory directly (its memory types: ", memory_types(),
                "); expose a host buffer and copy, or send/recv (staged)");
  }
  if (buffer->size_bytes == 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "cannot expose an empty buffer");
  }
  auto region = std::make_shared<ExposedRegion>();
  region->comm = shared_from_this();
  region->allocation = view.allocation;
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  mp.address = view.address();
  mp.length = buffer->size_bytes;
  mp.memory_type = type;
  std::lock_guard lock(ucx_mutex);
  ucs_status_t s = ucx_->ucp_mem_map(ucp_, &mp, &region->memh);
  if (s != UCS_OK) {
    region->memh = nullptr;
    return fail(ANYDEV_ERROR_DEVICE, op, "ucp_mem_map of ", buffer->size_bytes,
                " bytes failed: ", ucx_->ucs_status_string(s));
  }
  if (anydev_status_t st =
          pack_key(op, region->memh, view.address(), buffer->size_bytes, &region->key);
      st != ANYDEV_SUCCESS) {
    return st;
  }
  *out = std::move(region);
  return ANYDEV_SUCCESS;
}

anydev_status_t Communicator::pack_key(const char* op, ucp_mem_h memh, const void* address,
                                       std::size_t bytes, std::vector<std::uint8_t>* key) {
  void* packed = nullptr;
  std::size_t packed_size = 0;
  const ucs_status_t s = ucx_->ucp_rkey_pack(ucp_, memh, &packed, &packed_size);
  if (s != UCS_OK) {
    return fail(ANYDEV_ERROR_DEVICE, op, "ucp_rkey_pack failed: ", ucx_->ucs_status_string(s));
  }
  key->assign(kRegionMagic, kRegionMagic + 8);
  put_u32(*key, key_);
  put_u64(*key, reinterpret_cast<std::uintptr_t>(address));
  put_u64(*key, bytes);
  put_u32(*key, static_cast<std::uint32_t>(packed_size));
  const auto* b = static_cast<const std::uint8_t*>(packed);
  put_u64(*key, 0);  // the checksum, below
  key->insert(key->end(), b, b + packed_size);
  const std::uint64_t sum = checksum(key->data() + 8, 24) ^ checksum(b, packed_size);
  std::memcpy(key->data() + 32, &sum, 8);
  ucx_->ucp_rkey_buffer_release(packed);
  return ANYDEV_SUCCESS;
}

ExposedRegion::~ExposedRegion() {
  if (memh == nullptr) return;
  std::lock_guard lock(comm->ucx_mutex);
  comm->ucx().ucp_mem_unmap(comm->ucp(), memh);
}

anydev_status_t Communicator::import(int peer, const void* bytes, std::size_t size,
                                     std::shared_ptr<RemoteRegion>* out) {
  constexpr const char* op = "anydev_comm_import";
  const auto* p = static_cast<const std::uint8_t*>(bytes);
  if (size < kRegionHeader || std::memcmp(p, kRegionMagic, 8) != 0) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the ", size,
                " bytes are not an exposed region's key (no header)");
  }
  const auto owner_key = get<std::uint32_t>(p + 8);
  const auto address = get<std::uint64_t>(p + 12);
  const auto length = get<std::uint64_t>(p + 20);
  const auto packed = get<std::uint32_t>(p + 28);
  if (packed == 0 || size != kRegionHeader + packed) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op, "the key says ", packed,
                " bytes of UCX remote key but ", size - kRegionHeader, " follow its header");
  }
  if (get<std::uint64_t>(p + 32) != (checksum(p + 8, 24) ^ checksum(p + kRegionHeader, packed))) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                "the key bytes are damaged or forged (checksum mismatch)");
  }
  std::lock_guard lock(ucx_mutex);
  if (peer < 0 || peer >= static_cast<int>(peers_.size())) {
    return fail(ANYDEV_ERROR_OUT_OF_RANGE, op, "peer ", peer, " is not connected (", peers_.size(),
                " peers)");
  }
  Peer& target = *peers_[static_cast<std::size_t>(peer)];
  if (target.key != owner_key) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                "the region was exposed by another process, not "
                "by peer ",
                peer);
  }
  if (target.ep == nullptr || target.failed != ANYDEV_SUCCESS) {
    return fail(ANYDEV_ERROR_INVALID_STATE, op, target.why);
  }
  auto region = std::make_shared<RemoteRegion>();
  const ucs_status_t s = ucx_->ucp_ep_rkey_unpack(target.ep, p + kRegionHeader, &region->rkey);
  if (s != UCS_OK) {
    return fail(ANYDEV_ERROR_INVALID_ARGUMENT, op,
                "UCX rejected the remote key: ", ucx_->ucs_status_string(s));
  }
  region->comm = shared_from_this();
  region->peer = peer;
  region->address = address;
  region->bytes = length;
  *out = std::move(region);
  return ANYDEV_SUCCESS;
}

RemoteRegion::~RemoteRegion() {
  if (rkey != nullptr) comm->release_rkey(rkey);
}

}  // namespace anydev::core::transport

// SPDX-License-Identifier: Apache-2.0
#include "transport/put_flush.h"

#include <algorithm>

namespace anydev::core::transport {

void PutFlush::forget(void* waiter) {
  auto it = std::find_if(waiters_.begin(), waiters_.end(),
                         [&](const auto& w) { return w.second == waiter; });
  if (it != waiters_.end()) waiters_.erase(it);
}

void PutFlush::start(const UcxLibrary& ucx, ucp_ep_h ep, ucp_send_nbx_callback_t callback,
                     void* user) {
  covers_ = posted_;
  if (ep == nullptr) {
    ended(UCS_ERR_NOT_CONNECTED);
    return;
  }
  ucp_request_param_t rp{};
  rp.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  rp.cb.send = callback;
  rp.user_data = user;
  void* r = ucx.ucp_ep_flush_nbx(ep, &rp);
  if (UCS_PTR_IS_ERR(r)) {
    ended(UCS_PTR_STATUS(r));
  } else if (r == nullptr) {
    ended(UCS_OK);
  } else {
    request_ = r;
  }
}

void PutFlush::release(const UcxLibrary& ucx, ucp_worker_h worker,
                       std::chrono::steady_clock::time_point deadline) {
  if (request_ == nullptr) return;
  while (ucx.ucp_request_check_status(request_) == UCS_INPROGRESS &&
         std::chrono::steady_clock::now() < deadline) {
    ucx.ucp_worker_progress(worker);
  }
  ucx.ucp_request_free(request_);
  request_ = nullptr;
  ended_ = false;
}

}  // namespace anydev::core::transport

#include "transport/socket_wait.h"

#include <glog/logging.h>

#include "common/clock.h"

namespace pst {
namespace {

int SocketFd(zmq::socket_t& socket) { return socket.get(zmq::sockopt::fd); }

int Millis(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(timeout.count(), INT32_MAX)));
}

}  // namespace

bool HasMessage(zmq::socket_t& socket) {
  return (socket.get(zmq::sockopt::events) & ZMQ_POLLIN) != 0;
}

SocketWaiter::SocketWaiter(const std::vector<zmq::socket_t*>& sockets)
    : to_look_at_(sockets.size(), true) {
  for (zmq::socket_t* socket : sockets) fds_.push_back({SocketFd(*socket), POLLIN, 0});
}

bool SocketWaiter::TakeLook(size_t i) {
  const bool look = to_look_at_[i];
  to_look_at_[i] = false;
  return look;
}

bool SocketWaiter::Wait(const std::vector<bool>& wanted, std::chrono::milliseconds timeout,
                        std::vector<pollfd>* also) {
  CHECK_EQ(wanted.size(), fds_.size());
  waiting_.clear();
  waiting_index_.clear();
  bool marked = false;
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (!wanted[i]) continue;
    if (to_look_at_[i]) {
      marked = true;
    } else {
      waiting_.push_back(fds_[i]);
      waiting_index_.push_back(i);
    }
  }
  const size_t sockets = waiting_.size();
  if (also != nullptr) waiting_.insert(waiting_.end(), also->begin(), also->end());
  // With a socket marked the others are still polled, without sleeping:
  // a socket that stays busy must not keep the others from being read.
  // EINTR counts as a timeout: the caller's loop comes back.
  const int fired = ::poll(waiting_.data(), waiting_.size(), marked ? 0 : Millis(timeout));
  for (size_t k = 0; k < waiting_.size(); ++k) {
    const short revents = fired > 0 ? waiting_[k].revents : 0;
    if (k >= sockets) {
      (*also)[k - sockets].revents = revents;
    } else if (revents != 0) {
      to_look_at_[waiting_index_[k]] = true;
    }
  }
  return marked || fired > 0;
}

std::vector<bool> WaitForMessages(const std::vector<zmq::socket_t*>& sockets,
                                  const std::vector<int>& bells, const std::vector<bool>& wanted,
                                  std::chrono::milliseconds timeout) {
  const size_t n = sockets.size();
  std::vector<bool> ready(n, false);
  // Kept from call to call on this thread: a client waits for every reply.
  thread_local std::vector<pollfd> fds;
  thread_local std::vector<size_t> index;
  fds.clear();
  index.clear();
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    if (!wanted[i]) continue;
    ready[i] = HasMessage(*sockets[i]);
    any |= ready[i];
    fds.push_back({SocketFd(*sockets[i]), POLLIN, 0});
    index.push_back(i);
  }
  // The bells are polled after the sockets: fds[k] for k < num_sockets is
  // socket index[k]'s, the rest are bells.
  const size_t num_sockets = index.size();
  for (size_t i = 0; i < n; ++i) {
    if (!wanted[i] || bells[i] < 0) continue;
    fds.push_back({bells[i], POLLIN, 0});
    index.push_back(i);
  }
  if (any || fds.empty()) return ready;
  const auto deadline = SteadyClock().Now() + timeout;
  for (;;) {
    // Rounded up: a sub-millisecond remainder sleeps, not spins.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock().Now());
    if (::poll(fds.data(), fds.size(), Millis(left)) > 0) {
      for (size_t k = 0; k < fds.size(); ++k) {
        if (fds[k].revents == 0) continue;
        const bool has = k >= num_sockets || HasMessage(*sockets[index[k]]);
        ready[index[k]] = ready[index[k]] || has;
        any |= has;
      }
      if (any) return ready;
    }
    if (SteadyClock().Now() >= deadline) return ready;
  }
}

}  // namespace pst

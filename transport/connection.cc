// The parts of Connection and PendingCalls every transport shares: request
// ids, deadlines, matching replies to requests, error replies.
#include <glog/logging.h>

#include <algorithm>

#include "common/clock.h"
#include "transport/transport.h"

namespace pst {

MonotonicClock::TimePoint Connection::DefaultDeadline() const {
  return SteadyClock().Now() + std::chrono::milliseconds(options_.rpc_timeout_ms);
}

StatusOr<uint64_t> Connection::Send(const OutgoingMessage& request) {
  size_t bytes = 0;
  for (const OutTensor& t : request.tensors) bytes += t.tensor.num_bytes();
  if (bytes > options_.max_message_bytes) {
    return ResourceExhausted("request to " + options_.peer_name + " of " + std::to_string(bytes) +
                             " bytes exceeds its max_message_bytes (" +
                             std::to_string(options_.max_message_bytes) + ")");
  }
  const uint64_t id = next_request_id_++;
  PST_RETURN_IF_ERROR(Post(request, Envelope{id, options_.cluster_id, options_.role, options_.index,
                                             options_.container}));
  return id;
}

void Connection::DiscardReplies() {
  while (ReadOne().status().code() != Code::kUnavailable) {
  }
}

Status Connection::ReplyError(const ReceivedMessage& reply) const {
  Status status = reply.status();
  if (status.ok()) return status;
  return Status(status.code(), options_.peer_name + ": " + status.message());
}

StatusOr<ReceivedMessage> Connection::Receive(uint64_t request_id,
                                              MonotonicClock::TimePoint deadline) {
  return ReceiveAny({request_id}, deadline);
}

StatusOr<ReceivedMessage> Connection::ReceiveAny(const std::vector<uint64_t>& request_ids,
                                                 MonotonicClock::TimePoint deadline) {
  for (;;) {
    for (;;) {  // drain what is ready
      StatusOr<ReceivedMessage> reply = ReadOne();
      if (!reply.ok()) {
        if (reply.status().code() == Code::kUnavailable) break;
        LOG(WARNING) << "dropping undecodable reply from " << options_.peer_name << ": "
                     << reply.status().ToString();
        continue;
      }
      if (std::find(request_ids.begin(), request_ids.end(), reply->request_id()) ==
          request_ids.end()) {
        continue;  // answers an abandoned request
      }
      PST_RETURN_IF_ERROR(ReplyError(*reply));
      return reply;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock().Now());
    if (left.count() <= 0) {
      return DeadlineExceeded("no reply from " + options_.peer_name + " (" + options_.endpoint +
                              ") within its rpc_timeout_ms (" +
                              std::to_string(options_.rpc_timeout_ms) + " ms)");
    }
    std::vector<bool> ready;
    Poll({this}, {true}, left, &ready);
  }
}

StatusOr<ReceivedMessage> Connection::Call(const OutgoingMessage& request) {
  PST_ASSIGN_OR_RETURN(uint64_t id, Send(request));
  return Receive(id, DefaultDeadline());
}

void PendingCalls::Add(Connection* connection, uint64_t request_id) {
  if (calls_.empty()) {
    // One allocation each for a few shards' calls, not one per growth.
    constexpr size_t kFew = 4;
    connections_.reserve(kFew);
    replies_.reserve(kFew);
    calls_.reserve(kFew);
  }
  connections_.push_back(connection);
  replies_.emplace_back();
  calls_.push_back({request_id, false, Status::OK()});
  ++remaining_;
}

void PendingCalls::Clear() {
  connections_.clear();
  replies_.clear();
  calls_.clear();
  remaining_ = 0;
}

void PendingCalls::Redirect(size_t i, Connection* connection, uint64_t request_id) {
  connections_[i] = connection;
  calls_[i].request_id = request_id;
}

void PendingCalls::Reopen(size_t i) {
  if (!calls_[i].done) return;
  calls_[i].done = false;
  calls_[i].status = Status::OK();
  ++remaining_;
}

std::string PendingCalls::Silent(const std::vector<bool>& needed) const {
  std::string silent;
  for (size_t i = 0; i < connections_.size(); ++i) {
    if (calls_[i].done || (!needed.empty() && !needed[i])) continue;
    if (!silent.empty()) silent += ", ";
    silent += connections_[i]->peer_name() + " (" + connections_[i]->endpoint() + ")";
  }
  return silent;
}

Status PendingCalls::WaitAll(MonotonicClock::TimePoint deadline, const std::atomic<bool>* interrupt,
                             const std::vector<bool>& needed) {
  PST_ASSIGN_OR_RETURN(const size_t missing, WaitSome(deadline, interrupt, needed));
  if (missing > 0) {
    return DeadlineExceeded("no reply from " + Silent(needed) + " before the deadline");
  }
  for (size_t i = 0; i < calls_.size(); ++i) {
    if ((needed.empty() || needed[i]) && !calls_[i].status.ok()) return calls_[i].status;
  }
  return Status::OK();
}

StatusOr<size_t> PendingCalls::WaitSome(MonotonicClock::TimePoint deadline,
                                        const std::atomic<bool>* interrupt,
                                        const std::vector<bool>& needed) {
  const size_t n = connections_.size();
  auto missing = [&] {
    if (needed.empty()) return remaining_;
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) count += needed[i] && !calls_[i].done;
    return count;
  };
  // Whether a call on `connection` still waits for its reply.
  auto waits_on = [&](const Connection* connection) {
    for (size_t i = 0; i < n; ++i) {
      if (!calls_[i].done && connections_[i] == connection) return true;
    }
    return false;
  };
  wanted_.resize(n);
  while (missing() > 0) {
    if (interrupt != nullptr && interrupt->load()) return Aborted("interrupted by a signal");
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock().Now());
    if (left.count() <= 0) return missing();
    for (size_t i = 0; i < n; ++i) wanted_[i] = !calls_[i].done;
    if (interrupt != nullptr) left = std::min(left, std::chrono::milliseconds(100));
    connections_[0]->Poll(connections_, wanted_, left, &ready_);
    for (size_t i = 0; i < n; ++i) {
      if (calls_[i].done || !ready_[i]) continue;
      Connection* connection = connections_[i];
      // Read until none of this connection's calls waits. Replies may
      // answer any of them, or an abandoned request (then they are
      // dropped); one left in the socket is read by the next wait. Not
      // reading until the socket is empty saves a look that finds nothing.
      while (waits_on(connection)) {
        StatusOr<ReceivedMessage> reply = connection->ReadOne();
        if (!reply.ok()) {
          if (reply.status().code() == Code::kUnavailable) break;  // drained
          LOG(WARNING) << "dropping undecodable reply from " << connection->peer_name() << ": "
                       << reply.status().ToString();
          continue;
        }
        for (size_t j = 0; j < n; ++j) {
          Call& call = calls_[j];
          if (call.done || connections_[j] != connection ||
              call.request_id != reply->request_id()) {
            continue;
          }
          call.status = connection->ReplyError(*reply);
          replies_[j] = std::move(reply).value();
          call.done = true;
          --remaining_;
          break;
        }
      }
    }
  }
  return size_t{0};
}

}  // namespace pst

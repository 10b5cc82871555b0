#include "transport/shm_server_peers.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

#include "transport/bell_frames.h"
#include "transport/frames.h"
#include "transport/shm/shm_name.h"

namespace pst {
namespace {

// The cluster id a header frame claims; 0 when it does not verify.
uint64_t ClaimedClusterId(const zmq::message_t& header_frame) {
  std::unique_ptr<uint64_t[]> copy;
  const wire::Header* header = VerifiedHeader(header_frame, &copy);
  return header != nullptr ? header->cluster_id() : 0;
}

// Only names of pstrain segments of `cluster_id` are opened: a peer cannot
// make the server map anything else of /dev/shm.
Status CheckRingName(const std::string& name, uint64_t cluster_id) {
  const std::optional<ShmNameParts> parts =
      name.empty() ? std::nullopt : ParseShmSegmentName(name.substr(1));
  if (name.empty() || name[0] != '/' || !parts) {
    return InvalidArgument("'" + name + "' is not a shared-memory segment's name");
  }
  if (parts->cluster_id != cluster_id) {
    return PermissionDenied("shared-memory segment " + name + " is not of this cluster");
  }
  return Status::OK();
}

}  // namespace

ShmServerPeers::ShmServerPeers(ShmOptions options, std::string server_name)
    : options_(options), server_name_(std::move(server_name)) {}

StatusOr<std::shared_ptr<ShmServerPeers::Peer>> ShmServerPeers::Attach(const ShmRef& ref,
                                                                       uint64_t cluster_id) {
  PST_RETURN_IF_ERROR(CheckRingName(ref.request_ring, cluster_id));
  PST_RETURN_IF_ERROR(CheckRingName(ref.reply_ring, cluster_id));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<ShmSegment> requests,
                       ShmSegment::Open(ref.request_ring, cluster_id));
  PST_ASSIGN_OR_RETURN(std::unique_ptr<ShmSegment> replies,
                       ShmSegment::Open(ref.reply_ring, cluster_id));
  auto peer = std::make_shared<Peer>();
  StatusOr<std::unique_ptr<ShmBell>> request_bell = ShmBell::Open(ref.request_ring + ".bell");
  StatusOr<std::unique_ptr<ShmBell>> reply_bell =
      request_bell.ok() ? ShmBell::Open(ref.reply_ring + ".bell") : request_bell.status();
  if (reply_bell.ok()) {
    peer->request_bell = std::move(request_bell).value();
    peer->reply_bell = std::move(reply_bell).value();
  } else {
    LOG(WARNING) << server_name_ << ": headers from the client of " << ref.request_ring
                 << " go over TCP: " << reply_bell.status().ToString();
  }
  PST_ASSIGN_OR_RETURN(peer->replies, ShmRingWriter::Attach(*replies));
  peer->reply_segment = std::move(replies);
  PST_ASSIGN_OR_RETURN(peer->requests, ShmInbox::Attach(std::move(requests)));
  return peer;
}

void ShmServerPeers::Route(const std::string& routing_id, const std::string& peer_address,
                           const std::shared_ptr<Peer>& peer) {
  routes_[routing_id] = peer;
  peer->routing_id = routing_id;
  peer->peer_address = peer_address;
}

StatusOr<std::optional<ReceivedMessage>> ShmServerPeers::Incoming(
    const std::string& routing_id, const std::string& peer_address,
    std::vector<zmq::message_t>* frames, uint64_t cluster_id, size_t max_message_bytes) {
  if (frames->empty() || !IsShmRef(frames->front())) return std::optional<ReceivedMessage>();
  StatusOr<ShmRef> ref = DecodeShmRef(frames->front());
  frames->erase(frames->begin());
  PST_RETURN_IF_ERROR(ref.status());
  if (frames->empty()) return InvalidArgument("a shared-memory reference without a header");
  if (cluster_id == 0) cluster_id = ClaimedClusterId(frames->front());
  auto known = peers_.find(ref->request_ring);
  if (ref->kind == ShmRefKind::kOffer) {
    if (options_.mode == ShmMode::kOff) return std::optional<ReceivedMessage>();
    if (known != peers_.end()) {
      Route(routing_id, peer_address, known->second);
      return std::optional<ReceivedMessage>();
    }
    StatusOr<std::shared_ptr<Peer>> peer = Attach(*ref, cluster_id);
    if (!peer.ok()) {
      // The client sees the offer declined and stays on TCP.
      if (!declined_logged_) {
        LOG(WARNING) << server_name_ << " declined a shared-memory offer (logged once): "
                     << peer.status().ToString();
      }
      declined_logged_ = true;
      return std::optional<ReceivedMessage>();
    }
    peers_[ref->request_ring] = *peer;
    Route(routing_id, peer_address, *peer);
    return std::optional<ReceivedMessage>();
  }
  if (known == peers_.end()) {
    return FailedPrecondition("payload in shared-memory segment " + ref->request_ring +
                              ", which was never offered");
  }
  Route(routing_id, peer_address, known->second);
  PST_ASSIGN_OR_RETURN(ReceivedMessage message,
                       known->second->requests->Decode(std::move(frames->front()), ref->sequence,
                                                       max_message_bytes));
  return std::optional<ReceivedMessage>(std::move(message));
}

size_t ShmServerPeers::Outgoing(const std::string& routing_id,
                                std::vector<zmq::message_t>* frames) {
  const size_t bytes = InPlacePayloadBytes(*frames, 1);
  if (bytes == 0) return 0;
  auto route = routes_.find(routing_id);
  // A client that has left its rings reads the payload over TCP.
  if (route == routes_.end() || !route->second->replies ||
      route->second->replies->ReaderDetached()) {
    return 0;
  }
  Peer& peer = *route->second;
  StatusOr<std::optional<uint64_t>> sequence =
      WritePayload(*peer.replies, *frames, &peer.next_reply_sequence);
  if (!sequence.ok()) {
    // A corrupt ring: this client's replies go over TCP from now on.
    LOG(WARNING) << server_name_ << ": " << sequence.status().ToString();
    peer.replies.reset();
    return 0;
  }
  if (!*sequence) return 0;  // no room: over TCP
  std::vector<zmq::message_t> sent;
  sent.push_back(EncodeShmRef(ShmRef{ShmRefKind::kPayload, **sequence, "", ""}));
  sent.push_back(std::move(frames->front()));
  *frames = std::move(sent);
  return bytes;
}

bool ShmServerPeers::SendOverBell(const std::string& routing_id,
                                  const std::vector<zmq::message_t>& frames) {
  auto route = routes_.find(routing_id);
  if (route == routes_.end() || !route->second->reply_bell) return false;
  // A client that has left its rings no longer reads this bell.
  const Peer& peer = *route->second;
  if (peer.replies && peer.replies->ReaderDetached()) return false;
  return SendFramesOverBell(*route->second->reply_bell, frames);
}

void ShmServerPeers::AddBellFds(std::vector<pollfd>* fds) const {
  for (const auto& [name, peer] : peers_) {
    if (peer->request_bell) fds->push_back({peer->request_bell->fd(), POLLIN, 0});
  }
}

std::vector<ShmServerPeers::BellRequest> ShmServerPeers::TakeBellRequests(
    const std::vector<pollfd>& fds) {
  std::vector<BellRequest> requests;
  for (const auto& [name, peer] : peers_) {
    if (!peer->request_bell) continue;
    const int fd = peer->request_bell->fd();
    const bool fired = std::any_of(fds.begin(), fds.end(),
                                   [fd](const pollfd& p) { return p.fd == fd && p.revents != 0; });
    if (!fired) continue;
    for (;;) {
      StatusOr<std::optional<std::vector<zmq::message_t>>> frames =
          ReceiveFramesFromBell(*peer->request_bell);
      if (!frames.ok()) {
        // The records behind a malformed one cannot be told apart. Both
        // sides must stop using these bells: detached, the request ring
        // tells the client to start over with new segments and bells.
        LOG(WARNING) << server_name_ << ": " << frames.status().ToString()
                     << "; that client's shared memory starts over";
        peer->requests->Detach();
        peer->request_bell.reset();
        peer->reply_bell.reset();
        break;
      }
      if (!*frames) break;
      requests.push_back({peer->routing_id, peer->peer_address, std::move(*frames).value()});
    }
  }
  return requests;
}

void ShmServerPeers::DropGone() {
  for (auto it = peers_.begin(); it != peers_.end();) {
    it = it->second->requests->WriterGone() ? peers_.erase(it) : std::next(it);
  }
  for (auto it = routes_.begin(); it != routes_.end();) {
    it = it->second->requests->WriterGone() ? routes_.erase(it) : std::next(it);
  }
}

}  // namespace pst

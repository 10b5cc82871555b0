#include "transport/shm_client_link.h"

#include <glog/logging.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "transport/bell_frames.h"
#include "transport/bind_address.h"
#include "transport/frames.h"
#include "transport/shm/ring_size.h"
#include "transport/shm/stale_segments.h"
#include "transport/shm_ref.h"

namespace pst {
namespace {

constexpr char kShmDirectory[] = "/dev/shm";  // where shm_open puts segments

// Once per cluster id and process, before its first segment: what a killed
// task of the same job left in /dev/shm goes (stale_segments.h).
void CleanStaleOnce(uint64_t cluster_id) {
  static std::mutex mu;
  static std::set<uint64_t> cleaned;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!cleaned.insert(cluster_id).second) return;
  }
  StatusOr<int> removed = CleanStaleSegments(cluster_id);
  if (!removed.ok()) {
    LOG(WARNING) << "cleaning stale shared-memory segments: " << removed.status().ToString();
  } else if (*removed > 0) {
    LOG(INFO) << "removed " << *removed << " shared-memory segment(s) a killed task left";
  }
}

// Distinct segment names within this process.
std::string NextPurpose() {
  static std::atomic<uint64_t> links{0};
  return "ch" + std::to_string(links++);
}

}  // namespace

ShmClientLink::ShmClientLink(ShmOptions options, std::string peer_name, std::string endpoint)
    : options_(options), peer_name_(std::move(peer_name)), endpoint_(std::move(endpoint)) {}

ShmClientLink::~ShmClientLink() = default;

void ShmClientLink::Disable(const std::string& why) {
  if (!disabled_) {
    LOG(WARNING) << "shared memory to " << peer_name_ << " (" << endpoint_ << ") off: " << why
                 << "; tensors go over TCP";
  }
  disabled_ = true;
  Reset();
}

void ShmClientLink::Reset() {
  request_writer_.reset();
  request_segment_.reset();
  // Now, not when the last reply read from it is dropped: the server
  // stops writing to the ring and ringing its bell.
  if (reply_inbox_) reply_inbox_->Detach();
  reply_inbox_.reset();
  reply_ring_.clear();
  next_sequence_ = 0;
  offer_request_id_ = 0;
  attached_ = false;
  DropBells();
}

void ShmClientLink::MakeBells() {
  StatusOr<std::unique_ptr<ShmBell>> request = ShmBell::Create(request_segment_->name() + ".bell");
  StatusOr<std::unique_ptr<ShmBell>> reply =
      request.ok() ? ShmBell::Create(reply_ring_ + ".bell") : request.status();
  if (!reply.ok()) {
    LOG(WARNING) << "headers to " << peer_name_ << " go over TCP: " << reply.status().ToString();
    return;
  }
  request_bell_ = std::move(request).value();
  reply_bell_ = std::move(reply).value();
}

void ShmClientLink::DropBells() {
  request_bell_.reset();
  reply_bell_.reset();
  bells_confirmed_ = false;
}

bool ShmClientLink::Ready(uint64_t cluster_id, bool* server_alive) {
  if (disabled_ || options_.mode == ShmMode::kOff || cluster_id == 0) return false;
  if (on_this_host_ < 0) on_this_host_ = EndpointIsOnThisHost(endpoint_) ? 1 : 0;
  if (on_this_host_ == 0) return false;
  // A server that is gone (killed, restarted) never releases what its
  // rings hold; a new one gets new rings.
  if (request_writer_ && (cluster_id != cluster_id_ || request_writer_->ReaderGone())) Reset();
  if (request_writer_) {
    *server_alive = true;
    return true;
  }
  CleanStaleOnce(cluster_id);
  const size_t ring_bytes = RingBytes();
  if (ring_bytes == 0) return false;
  const std::string purpose = NextPurpose();
  StatusOr<std::unique_ptr<ShmSegment>> request =
      ShmSegment::Create(cluster_id, purpose + ".req", ring_bytes);
  StatusOr<std::unique_ptr<ShmSegment>> reply =
      request.ok() ? ShmSegment::Create(cluster_id, purpose + ".rep", ring_bytes)
                   : StatusOr<std::unique_ptr<ShmSegment>>(request.status());
  if (!reply.ok()) {
    Disable(reply.status().ToString());
    return false;
  }
  StatusOr<std::unique_ptr<ShmRingWriter>> writer = ShmRingWriter::Attach(**request);
  reply_ring_ = (*reply)->name();
  StatusOr<std::shared_ptr<ShmInbox>> inbox = ShmInbox::Attach(std::move(reply).value());
  if (!writer.ok() || !inbox.ok()) {
    Disable((writer.ok() ? inbox.status() : writer.status()).ToString());
    return false;
  }
  cluster_id_ = cluster_id;
  request_segment_ = std::move(request).value();
  request_writer_ = std::move(writer).value();
  reply_inbox_ = std::move(inbox).value();
  MakeBells();
  return true;
}

size_t ShmClientLink::RingBytes() {
  const std::optional<uint64_t> free_bytes = FreeBytesAt(kShmDirectory);
  // Unknown: ask for the whole rings; Create says what went wrong.
  if (!free_bytes) return options_.ring_bytes;
  const size_t ring_bytes = RingBytesFor(options_.ring_bytes, *free_bytes);
  const auto mib = [](uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
  const std::string room = kShmDirectory + std::string(" has ") + mib(*free_bytes) +
                           " free (docs/DEPLOYMENT.md: --shm-size)";
  if (ring_bytes == 0) {
    Disable(room);
  } else if (ring_bytes < options_.ring_bytes) {
    LOG(INFO) << "rings to " << peer_name_ << " of " << mib(ring_bytes) << ", not "
              << mib(options_.ring_bytes) << ": " << room << "; a message over " << mib(ring_bytes)
              << " goes over TCP";
  }
  return ring_bytes;
}

void ShmClientLink::MarkAttached() {
  attached_ = true;
  LOG(INFO) << "tensors to " << peer_name_ << " (" << endpoint_ << ") go through shared memory "
            << request_segment_->name() << " and " << reply_ring_;
  // The server maps both segments before it attaches the request ring's
  // reader, so no one opens them by name again; and a name gone from
  // /dev/shm is one a SIGKILL cannot leave behind.
  request_segment_->Unlink();
  reply_inbox_->Unlink();
  if (request_bell_) {
    request_bell_->Unlink();
    reply_bell_->Unlink();
  }
}

ShmRef ShmClientLink::Ref(ShmRefKind kind, uint64_t sequence) const {
  return ShmRef{kind, sequence, request_segment_->name(), reply_ring_};
}

std::vector<zmq::message_t> ShmClientLink::Send(std::vector<zmq::message_t> frames,
                                                uint64_t request_id, uint64_t cluster_id) {
  // Whether the server is alive is looked at once per request, in Ready or
  // here: kill(pid, 0) is a system call.
  bool server_alive = false;
  frames = Outgoing(std::move(frames), request_id, cluster_id, &server_alive);
  // A server that is gone reads no bell; ZeroMQ keeps the request for the
  // one that takes its place.
  if (!bells_confirmed_ || !attached_) return frames;
  if (!server_alive && request_writer_->ReaderGone()) return frames;
  if (SendFramesOverBell(*request_bell_, frames)) return {};
  return frames;
}

std::vector<zmq::message_t> ShmClientLink::Outgoing(std::vector<zmq::message_t> frames,
                                                    uint64_t request_id, uint64_t cluster_id,
                                                    bool* server_alive) {
  const size_t bytes = InPlacePayloadBytes(frames, 1);
  if (bytes == 0 || !Ready(cluster_id, server_alive)) return frames;
  if (!attached_ && request_writer_->ReaderAttached()) MarkAttached();
  if (!attached_) {
    if (offer_request_id_ == 0) offer_request_id_ = request_id;
    frames.insert(frames.begin(), EncodeShmRef(Ref(ShmRefKind::kOffer, 0)));
    return frames;
  }
  StatusOr<std::optional<uint64_t>> sequence =
      WritePayload(*request_writer_, frames, &next_sequence_);
  if (!sequence.ok()) {
    Disable(sequence.status().ToString());
    return frames;
  }
  if (!*sequence) return frames;  // no room: over TCP
  std::vector<zmq::message_t> sent;
  sent.push_back(EncodeShmRef(Ref(ShmRefKind::kPayload, **sequence)));
  sent.push_back(std::move(frames[0]));
  return sent;
}

StatusOr<std::optional<ReceivedMessage>> ShmClientLink::ReadFromBell(size_t max_message_bytes) {
  if (!reply_bell_) return std::optional<ReceivedMessage>();
  StatusOr<std::optional<std::vector<zmq::message_t>>> frames = ReceiveFramesFromBell(*reply_bell_);
  if (!frames.ok()) {
    // The records behind a malformed one cannot be told apart. Leaving the
    // rings (the reply ring's reader detaches) stops the server ringing
    // this bell; the next request offers new segments and bells.
    LOG(WARNING) << "shared memory to " << peer_name_
                 << " starts over: " << frames.status().ToString();
    Reset();
    return frames.status();
  }
  if (!*frames) return std::optional<ReceivedMessage>();
  bells_confirmed_ = true;
  PST_ASSIGN_OR_RETURN(ReceivedMessage message, Incoming(std::move(**frames), max_message_bytes));
  return std::optional<ReceivedMessage>(std::move(message));
}

StatusOr<ReceivedMessage> ShmClientLink::Incoming(std::vector<zmq::message_t> frames,
                                                  size_t max_message_bytes) {
  StatusOr<ReceivedMessage> message = InvalidArgument("empty message");
  if (!frames.empty() && IsShmRef(frames[0])) {
    PST_ASSIGN_OR_RETURN(const ShmRef ref, DecodeShmRef(frames[0]));
    if (ref.kind != ShmRefKind::kPayload || frames.size() != 2 || !reply_inbox_) {
      return InvalidArgument("unexpected shared-memory reference from " + peer_name_);
    }
    message = reply_inbox_->Decode(std::move(frames[1]), ref.sequence, max_message_bytes);
  } else {
    message = DecodeMessage(std::move(frames), max_message_bytes);
  }
  // The server takes an offer (or not) before it answers the request that
  // carried it: an answer without it attached is a refusal.
  if (message.ok() && !attached_ && offer_request_id_ != 0 &&
      message->request_id() >= offer_request_id_) {
    if (request_writer_->ReaderAttached()) {
      MarkAttached();
    } else {
      Disable(peer_name_ + " did not take the offer (its --shm=off, or it cannot open " +
              request_segment_->name() + "; see its log)");
    }
  }
  return message;
}

}  // namespace pst

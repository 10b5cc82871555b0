#include "transport/shm_payload.h"

#include <functional>
#include <string>
#include <utility>

#include "transport/frames.h"

namespace pst {
namespace {

// Releases one ring message when the last message decoded from it goes.
class PayloadHold {
 public:
  explicit PayloadHold(std::function<void()> release) : release_(std::move(release)) {}
  ~PayloadHold() { release_(); }
  PayloadHold(const PayloadHold&) = delete;
  PayloadHold& operator=(const PayloadHold&) = delete;

 private:
  const std::function<void()> release_;
};

}  // namespace

StatusOr<std::optional<uint64_t>> WritePayload(ShmRingWriter& writer,
                                               const std::vector<zmq::message_t>& frames,
                                               uint64_t* next_sequence) {
  const size_t bytes = InPlacePayloadBytes(frames, 1);
  PST_ASSIGN_OR_RETURN(const std::optional<ShmSlot> slot, writer.TryReserve(bytes));
  if (!slot) return std::optional<uint64_t>();
  CopyInPlacePayload(frames, 1, slot->data);
  writer.Commit();
  return std::optional<uint64_t>((*next_sequence)++);
}

StatusOr<std::shared_ptr<ShmInbox>> ShmInbox::Attach(std::unique_ptr<ShmSegment> segment) {
  PST_ASSIGN_OR_RETURN(std::unique_ptr<ShmRingReader> reader, ShmRingReader::Attach(*segment));
  return std::shared_ptr<ShmInbox>(new ShmInbox(std::move(segment), std::move(reader)));
}

ShmInbox::ShmInbox(std::unique_ptr<ShmSegment> segment, std::unique_ptr<ShmRingReader> reader)
    : segment_(std::move(segment)), reader_(std::move(reader)) {}

StatusOr<ReceivedMessage> ShmInbox::Decode(zmq::message_t header_frame, uint64_t sequence,
                                           size_t max_message_bytes) {
  std::optional<ShmMessage> message;
  {
    MutexLock lock(mu_);
    for (;;) {
      PST_ASSIGN_OR_RETURN(message, reader_->TryRead());
      if (!message || message->sequence >= sequence) break;
      reader_->Release(message->sequence);  // nobody will ask for it
    }
  }
  if (!message || message->sequence != sequence) {
    if (message) Release(message->sequence);
    return DataLoss("shared-memory message " + std::to_string(sequence) + " is not in " + name());
  }
  // The hold keeps the inbox (and so the mapping) alive with the message.
  auto hold = std::make_shared<PayloadHold>(
      [self = shared_from_this(), sequence] { self->Release(sequence); });
  return DecodeMessageInPlace(std::move(header_frame), message->data, message->size,
                              std::move(hold), max_message_bytes);
}

void ShmInbox::Release(uint64_t sequence) {
  MutexLock lock(mu_);
  reader_->Release(sequence);
}

void ShmInbox::Detach() {
  MutexLock lock(mu_);
  reader_->Detach();
}

bool ShmInbox::WriterGone() const {
  MutexLock lock(mu_);
  return reader_->WriterGone();
}

}  // namespace pst

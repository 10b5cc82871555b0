#include "transport/shm_ref.h"

#include <cstring>

namespace pst {
namespace {

constexpr char kMagic[8] = {'P', 'S', 'T', 'S', 'H', 'M', 'R', '1'};
// Segment names are short ("/pst-<16 hex>-<pid>-<purpose>"); anything
// longer is not one.
constexpr size_t kMaxName = 255;

// magic, kind, two name lengths, sequence; then the two names.
struct Fixed {
  char magic[8];
  uint32_t kind;
  uint16_t request_ring_bytes;
  uint16_t reply_ring_bytes;
  uint64_t sequence;
};

}  // namespace

zmq::message_t EncodeShmRef(const ShmRef& ref) {
  Fixed fixed;
  std::memcpy(fixed.magic, kMagic, sizeof(kMagic));
  fixed.kind = static_cast<uint32_t>(ref.kind);
  fixed.request_ring_bytes = static_cast<uint16_t>(ref.request_ring.size());
  fixed.reply_ring_bytes = static_cast<uint16_t>(ref.reply_ring.size());
  fixed.sequence = ref.sequence;
  zmq::message_t frame(sizeof(Fixed) + ref.request_ring.size() + ref.reply_ring.size());
  auto* out = static_cast<char*>(frame.data());
  std::memcpy(out, &fixed, sizeof(fixed));
  std::memcpy(out + sizeof(fixed), ref.request_ring.data(), ref.request_ring.size());
  std::memcpy(out + sizeof(fixed) + ref.request_ring.size(), ref.reply_ring.data(),
              ref.reply_ring.size());
  return frame;
}

bool IsShmRef(const zmq::message_t& frame) {
  return frame.size() >= sizeof(kMagic) && std::memcmp(frame.data(), kMagic, sizeof(kMagic)) == 0;
}

StatusOr<ShmRef> DecodeShmRef(const zmq::message_t& frame) {
  if (!IsShmRef(frame) || frame.size() < sizeof(Fixed)) {
    return InvalidArgument("shared-memory reference of " + std::to_string(frame.size()) +
                           " bytes is truncated");
  }
  Fixed fixed;
  std::memcpy(&fixed, frame.data(), sizeof(fixed));
  if (fixed.kind != static_cast<uint32_t>(ShmRefKind::kOffer) &&
      fixed.kind != static_cast<uint32_t>(ShmRefKind::kPayload)) {
    return InvalidArgument("shared-memory reference of unknown kind " + std::to_string(fixed.kind));
  }
  if (fixed.request_ring_bytes > kMaxName || fixed.reply_ring_bytes > kMaxName ||
      frame.size() != sizeof(Fixed) + fixed.request_ring_bytes + fixed.reply_ring_bytes) {
    return InvalidArgument("shared-memory reference of " + std::to_string(frame.size()) +
                           " bytes does not hold the names it declares");
  }
  const auto* names = static_cast<const char*>(frame.data()) + sizeof(Fixed);
  ShmRef ref;
  ref.kind = static_cast<ShmRefKind>(fixed.kind);
  ref.sequence = fixed.sequence;
  ref.request_ring.assign(names, fixed.request_ring_bytes);
  ref.reply_ring.assign(names + fixed.request_ring_bytes, fixed.reply_ring_bytes);
  return ref;
}

}  // namespace pst

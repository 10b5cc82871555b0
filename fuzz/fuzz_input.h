// The byte layout of a fuzz_decode input, shared by the fuzzer (which
// parses it) and make_corpus (which writes the seeds).
//
//   byte 0      options (FuzzOptions below)
//   then messages until the input ends, each:
//     byte      frame count n (0..255; 0 makes an empty message)
//     n times:  a little-endian uint16 length L, then L bytes
//               (L is cut to what is left of the input)
//
// A message is one multipart ZeroMQ message as a ps receives it after the
// routing id: frame 0 the header, frames 1.. the tensor bytes.
#ifndef PST_FUZZ_FUZZ_INPUT_H_
#define PST_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pst {
namespace fuzz {

struct FuzzOptions {
  bool sync = false;  // bit 0: the shard starts in sync mode (else async)
  // Bits 1-2: the max_message_bytes given to DecodeMessage.
  size_t max_message_bytes = size_t{1} << 30;
  // Bits 3-4: every frame starts this many bytes past an aligned address,
  // as ZeroMQ's zero-copy receive leaves them (frames point into its
  // receive buffer at any offset).
  size_t misalign = 0;
};

inline constexpr size_t kMessageLimits[4] = {size_t{1} << 30, 4096, 256, 16};

inline FuzzOptions DecodeOptions(uint8_t byte) {
  FuzzOptions o;
  o.sync = byte & 1;
  o.max_message_bytes = kMessageLimits[(byte >> 1) & 3];
  o.misalign = (byte >> 3) & 3;
  return o;
}

// The options byte for sync, limit index (0..3) and misalignment (0..3).
inline uint8_t EncodeOptions(bool sync, int limit_index, int misalign) {
  return static_cast<uint8_t>((sync ? 1 : 0) | (limit_index & 3) << 1 | (misalign & 3) << 3);
}

using Frames = std::vector<std::string>;

// Appends one message; every frame must be shorter than 64 KiB.
inline void AppendMessage(const Frames& frames, std::string* out) {
  out->push_back(static_cast<char>(frames.size()));
  for (const std::string& f : frames) {
    out->push_back(static_cast<char>(f.size() & 0xff));
    out->push_back(static_cast<char>(f.size() >> 8));
    out->append(f);
  }
}

// Splits an input into its options and messages. Never fails: a short
// input gives fewer or shorter frames.
inline FuzzOptions ParseInput(const uint8_t* data, size_t size, std::vector<Frames>* messages) {
  if (size == 0) return FuzzOptions();
  const FuzzOptions options = DecodeOptions(data[0]);
  size_t pos = 1;
  while (pos < size) {
    const size_t count = data[pos++];
    Frames frames;
    for (size_t i = 0; i < count; ++i) {
      size_t length = 0;
      if (pos < size) length = data[pos++];
      if (pos < size) length |= size_t{data[pos++]} << 8;
      if (length > size - pos) length = size - pos;
      frames.emplace_back(reinterpret_cast<const char*>(data + pos), length);
      pos += length;
    }
    messages->push_back(std::move(frames));
  }
  return options;
}

}  // namespace fuzz
}  // namespace pst

#endif  // PST_FUZZ_FUZZ_INPUT_H_

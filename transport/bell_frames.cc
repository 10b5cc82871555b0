#include "transport/bell_frames.h"

#include <cstring>
#include <string>

namespace pst {
namespace {

constexpr size_t kWord = sizeof(uint32_t);

uint32_t WordAt(const std::string& record, size_t offset) {
  uint32_t word;
  std::memcpy(&word, record.data() + offset, kWord);
  return word;
}

}  // namespace

bool SendFramesOverBell(ShmBell& bell, const std::vector<zmq::message_t>& frames) {
  size_t bytes = kWord * (1 + frames.size());
  for (const zmq::message_t& frame : frames) bytes += frame.size();
  if (bytes > ShmBell::max_record_bytes()) return false;
  std::vector<uint32_t> table;
  table.reserve(1 + frames.size());
  table.push_back(static_cast<uint32_t>(frames.size()));
  for (const zmq::message_t& frame : frames) table.push_back(static_cast<uint32_t>(frame.size()));
  std::vector<iovec> parts;
  parts.reserve(1 + frames.size());
  parts.push_back({table.data(), table.size() * kWord});
  for (const zmq::message_t& frame : frames) {
    parts.push_back({const_cast<void*>(frame.data()), frame.size()});
  }
  return bell.TrySend(parts);
}

StatusOr<std::optional<std::vector<zmq::message_t>>> ReceiveFramesFromBell(ShmBell& bell) {
  PST_ASSIGN_OR_RETURN(std::optional<std::string> record, bell.TryReceive());
  if (!record) return std::optional<std::vector<zmq::message_t>>();
  const auto malformed = [&bell] {
    return DataLoss("named pipe " + bell.name() + " holds a malformed message");
  };
  if (record->size() < kWord) return malformed();
  const uint32_t count = WordAt(*record, 0);
  if (count > (record->size() - kWord) / kWord) return malformed();
  size_t offset = kWord * (1 + static_cast<size_t>(count));
  std::vector<zmq::message_t> frames;
  frames.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const size_t size = WordAt(*record, kWord * (1 + i));
    if (size > record->size() - offset) return malformed();
    frames.emplace_back(record->data() + offset, size);
    offset += size;
  }
  if (offset != record->size()) return malformed();
  return std::optional<std::vector<zmq::message_t>>(std::move(frames));
}

}  // namespace pst

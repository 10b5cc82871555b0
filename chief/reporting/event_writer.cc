#include "chief/reporting/event_writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "chief/checkpoints/crc32c.h"
#include "common/create_folder.h"

namespace pst {
namespace {

// Protobuf keys: (field number << 3) | wire type, where wire type 0 is varint,
// 1 fixed64, 2 length-delimited and 5 fixed32. All fit in one byte.
constexpr char kEventWallTime = 0x09;     // Event.wall_time = 1, double
constexpr char kEventStep = 0x10;         // Event.step = 2, int64
constexpr char kEventFileVersion = 0x1a;  // Event.file_version = 3, string
constexpr char kEventSummary = 0x2a;      // Event.summary = 5, Summary
constexpr char kSummaryValue = 0x0a;      // Summary.value = 1, repeated Value
constexpr char kValueTag = 0x0a;          // Value.tag = 1, string
constexpr char kValueSimple = 0x15;       // Value.simple_value = 2, float

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Little-endian, as both protobuf fixed fields and TFRecord framing store them.
void AppendFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void AppendLengthDelimited(std::string* out, char key, const std::string& bytes) {
  out->push_back(key);
  AppendVarint(out, bytes.size());
  *out += bytes;
}

// TFRecord stores CRCs masked: a CRC of data that itself holds CRCs is weak.
uint32_t MaskedCrc32c(const std::string& bytes) {
  const uint32_t crc = Crc32c(bytes.data(), bytes.size());
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

double WallTime() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration<double>(since_epoch).count();
}

std::string HostName() {
  char name[256] = {};  // gethostname need not terminate a truncated name
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

// The fields every Event starts with; the caller appends one of `what`.
std::string EventHeader(double wall_time, int64_t step) {
  uint64_t wall_time_bits;
  std::memcpy(&wall_time_bits, &wall_time, sizeof(wall_time_bits));
  std::string event;
  event.push_back(kEventWallTime);
  AppendFixed(&event, wall_time_bits, 8);
  event.push_back(kEventStep);
  AppendVarint(&event, static_cast<uint64_t>(step));  // int64: two's complement
  return event;
}

}  // namespace

std::string RunEventDir(const std::string& logdir, const std::string& run_dir) {
  if (!run_dir.empty()) {
    // "runs/a/", "." and "a/.." name their folder too.
    std::filesystem::path dir = std::filesystem::absolute(run_dir).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();
    return logdir + "/" + dir.filename().string();
  }
  const std::time_t now = std::time(nullptr);
  std::tm local;
  localtime_r(&now, &local);
  char name[64];
  std::strftime(name, sizeof(name), "run-%Y%m%d-%H%M%S", &local);
  return logdir + "/" + name + "-" + std::to_string(getpid());
}

StatusOr<std::unique_ptr<EventWriter>> EventWriter::Open(const std::string& logdir) {
  PST_RETURN_IF_ERROR(CreateFolder(logdir, "event folder " + logdir));
  const double now = WallTime();
  const std::string path = logdir + "/events.out.tfevents." +
                           std::to_string(static_cast<int64_t>(now)) + "." + HostName();
  // "x": never truncate another writer's file that happens to share the name.
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  if (file == nullptr) {
    return FileError("cannot create event file " + path, errno);
  }
  std::unique_ptr<EventWriter> writer(new EventWriter(path, file));
  std::string event = EventHeader(now, 0);
  AppendLengthDelimited(&event, kEventFileVersion, "brain.Event:2");
  PST_RETURN_IF_ERROR(writer->WriteRecord(event));
  return writer;
}

EventWriter::~EventWriter() { std::fclose(file_); }

Status EventWriter::AddScalars(int64_t step,
                               const std::vector<std::pair<std::string, double>>& scalars) {
  std::string summary;
  for (const auto& [tag, value] : scalars) {
    const float simple_value = static_cast<float>(value);
    uint32_t simple_value_bits;
    std::memcpy(&simple_value_bits, &simple_value, sizeof(simple_value_bits));
    std::string encoded;
    AppendLengthDelimited(&encoded, kValueTag, tag);
    encoded.push_back(kValueSimple);
    AppendFixed(&encoded, simple_value_bits, 4);
    AppendLengthDelimited(&summary, kSummaryValue, encoded);
  }
  std::string event = EventHeader(WallTime(), step);
  AppendLengthDelimited(&event, kEventSummary, summary);
  return WriteRecord(event);
}

// Record: u64 length, masked CRC of those 8 bytes, data, masked CRC of data.
Status EventWriter::WriteRecord(const std::string& data) {
  std::string record;
  AppendFixed(&record, data.size(), 8);
  AppendFixed(&record, MaskedCrc32c(record), 4);
  record += data;
  AppendFixed(&record, MaskedCrc32c(data), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return FileError("writing event file " + path_ + " failed", errno);
  }
  return Status::OK();
}

}  // namespace pst

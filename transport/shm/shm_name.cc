#include "transport/shm/shm_name.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace pst {
namespace {

constexpr size_t kMaxPurpose = 128;
constexpr size_t kClusterHexDigits = 16;

bool IsPurposeChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::string ShmClusterPrefix(uint64_t cluster_id) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "pst-%016" PRIx64 "-", cluster_id);
  return prefix;
}

StatusOr<std::string> ShmSegmentName(uint64_t cluster_id, pid_t creator,
                                     const std::string& purpose) {
  if (purpose.empty() || purpose.size() > kMaxPurpose) {
    return InvalidArgument("shared-memory purpose must be 1 to 128 characters: '" + purpose + "'");
  }
  for (char c : purpose) {
    if (!IsPurposeChar(c)) {
      return InvalidArgument("shared-memory purpose may hold only [A-Za-z0-9._-]: '" + purpose +
                             "'");
    }
  }
  return "/" + ShmClusterPrefix(cluster_id) + std::to_string(creator) + "-" + purpose;
}

std::optional<ShmNameParts> ParseShmSegmentName(const std::string& entry) {
  // pst- + 16 hex + - + at least one pid digit + - + at least one purpose character.
  const size_t hex_start = 4;
  const size_t pid_start = hex_start + kClusterHexDigits + 1;
  if (entry.size() < pid_start + 3 || entry.compare(0, hex_start, "pst-") != 0 ||
      entry[pid_start - 1] != '-') {
    return std::nullopt;
  }
  for (size_t i = hex_start; i < pid_start - 1; ++i) {
    if (!IsLowerHex(entry[i])) return std::nullopt;
  }
  size_t pid_end = pid_start;
  while (pid_end < entry.size() && entry[pid_end] >= '0' && entry[pid_end] <= '9') ++pid_end;
  const size_t pid_digits = pid_end - pid_start;
  // 10 digits hold every pid_t (pid_max is at most 2^22).
  if (pid_digits == 0 || pid_digits > 10 || pid_end + 1 >= entry.size() || entry[pid_end] != '-') {
    return std::nullopt;
  }
  ShmNameParts parts;
  parts.cluster_id = std::strtoull(entry.substr(hex_start, kClusterHexDigits).c_str(), nullptr, 16);
  const long long pid = std::strtoll(entry.substr(pid_start, pid_digits).c_str(), nullptr, 10);
  if (pid <= 0 || pid > INT32_MAX) return std::nullopt;
  parts.creator = static_cast<pid_t>(pid);
  return parts;
}

}  // namespace pst

#include "transport/shm_options.h"

#include <atomic>
#include <cstdlib>

namespace pst {
namespace {

ShmMode ModeFromEnvironment() {
  const char* value = std::getenv("PST_SHM");
  return value != nullptr && std::string(value) == "off" ? ShmMode::kOff : ShmMode::kAuto;
}

std::atomic<ShmMode>& DefaultMode() {
  static std::atomic<ShmMode> mode{ModeFromEnvironment()};
  return mode;
}

}  // namespace

StatusOr<ShmMode> ParseShmMode(const std::string& text) {
  if (text == "auto") return ShmMode::kAuto;
  if (text == "off") return ShmMode::kOff;
  return InvalidArgument("--shm=" + text + " is not one of: auto, off");
}

ShmOptions DefaultShmOptions() {
  ShmOptions options;
  options.mode = DefaultMode().load();
  return options;
}

void SetDefaultShmMode(ShmMode mode) { DefaultMode().store(mode); }

}  // namespace pst

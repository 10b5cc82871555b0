#include "ps/stop_policy.h"

#include "common/clock.h"

namespace pst {
namespace {

std::string Ms(std::chrono::milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

}  // namespace

StopPolicy::Decision StopPolicy::Decide(
    MonotonicClock::TimePoint now, MonotonicClock::TimePoint signalled_at,
    std::optional<MonotonicClock::TimePoint> last_chief_contact) const {
  if (!last_chief_contact) return {true, "the chief never spoke to this ps"};
  const auto silent =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_chief_contact);
  if (silent >= options_.chief_silence) {
    return {true, "the chief has been silent for " + Ms(silent)};
  }
  const std::string grace = std::to_string(options_.grace.count());
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - signalled_at);
  if (waited >= options_.grace) {
    return {true, "the chief did not stop this ps within --stop_grace_ms=" + grace};
  }
  return {false,
          "serving until the chief has checkpointed and stops the cluster (at most "
          "--stop_grace_ms=" +
              grace + ")"};
}

}  // namespace pst

// StopPolicy: when a ps that got SIGTERM stops serving.
//
// A job-wide SIGTERM (scancel, Slurm preemption, every pod of a job deleted)
// reaches every task at once, and the chief's final checkpoint needs the ps.
// So a ps whose chief is in touch keeps serving until the chief shuts it
// down, for at most `grace`; a ps whose chief has been silent for
// `chief_silence` (gone, or never there) stops at once.
#ifndef PST_PS_STOP_POLICY_H_
#define PST_PS_STOP_POLICY_H_

#include <chrono>
#include <optional>
#include <string>

#include "common/clock.h"

namespace pst {

struct StopPolicyOptions {
  // Below the 30 s that Slurm (KillWait) and Kubernetes
  // (terminationGracePeriodSeconds) leave between SIGTERM and SIGKILL.
  std::chrono::milliseconds grace{25000};
  // The chief probes every shard twice a second while training and talks to
  // each one while it checkpoints.
  std::chrono::milliseconds chief_silence{3000};
};

class StopPolicy {
 public:
  struct Decision {
    bool stop = false;
    std::string reason;  // why it stops, or why it keeps serving
  };

  explicit StopPolicy(StopPolicyOptions options) : options_(options) {}

  // `signalled_at`: the first SIGTERM/SIGINT; `last_chief_contact`: the
  // chief's last request to this shard (none: never).
  Decision Decide(MonotonicClock::TimePoint now, MonotonicClock::TimePoint signalled_at,
                  std::optional<MonotonicClock::TimePoint> last_chief_contact) const;

 private:
  StopPolicyOptions options_;
};

}  // namespace pst

#endif  // PST_PS_STOP_POLICY_H_

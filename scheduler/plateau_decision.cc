#include "scheduler/plateau_decision.h"

#include <glog/logging.h>

namespace pst {

PlateauDecision::PlateauDecision(PlateauOptions options, int lowerings)
    : options_(options), lowerings_(lowerings) {
  CHECK_GE(options_.patience, 1);
  CHECK_GE(options_.min_delta, 0);
  CHECK_GE(options_.cooldown, 0);
  CHECK_GE(lowerings_, 0);
}

bool PlateauDecision::Observe(double validation_loss) {
  const bool in_cooldown = cooldown_left_ > 0;
  if (in_cooldown) --cooldown_left_;
  if (validation_loss < best_ - options_.min_delta) {
    best_ = validation_loss;
    without_improvement_ = 0;
    return false;
  }
  if (in_cooldown) return false;
  if (++without_improvement_ < options_.patience) return false;
  without_improvement_ = 0;
  cooldown_left_ = options_.cooldown;
  ++lowerings_;
  return true;
}

}  // namespace pst

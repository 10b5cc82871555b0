#include "chief/lr_plateau.h"

#include <glog/logging.h>

#include <algorithm>

namespace pst {

LrPlateau::LrPlateau(LrSchedule schedule, PlateauOptions options, ShardAdmin* ps)
    : schedule_(schedule), options_(options), ps_(ps), decision_(options) {
  CHECK(schedule_.kind() == LrDecay::kPlateau);
}

Status LrPlateau::Restart(int lowerings, MonotonicClock::TimePoint deadline) {
  decision_ = PlateauDecision(options_, lowerings);
  PST_RETURN_IF_ERROR(ps_->SetLrLowerings(lowerings, deadline));
  if (lowerings > 0) LOG(INFO) << "the learning rate goes on lowered " << lowerings << " times";
  return Status::OK();
}

Status LrPlateau::Resend(MonotonicClock::TimePoint deadline) {
  return ps_->SetLrLowerings(lowerings(), deadline);
}

// Logged before the ps are told: a failure to tell them is recovered from,
// and the recovery says which k the shards go on with.
Status LrPlateau::Observe(int64_t step, double validation_loss,
                          MonotonicClock::TimePoint deadline) {
  if (!decision_.Observe(validation_loss)) return Status::OK();
  LOG(INFO) << "step " << step << ": validation loss " << validation_loss << " did not improve for "
            << options_.patience << (options_.patience == 1 ? " evaluation" : " evaluations")
            << ": learning rate lowered to " << RateAt(step) << " (lowering " << lowerings() << ")";
  return ps_->SetLrLowerings(lowerings(), deadline);
}

float LrPlateau::RateAt(int64_t step) const {
  return schedule_.RateAt(std::max<int64_t>(step, 0), lowerings());
}

}  // namespace pst

#include "ps/shard_config.h"

#include <cmath>
#include <sstream>

namespace pst {

StatusOr<StalenessPolicy> ParseStalenessPolicy(const std::string& name) {
  if (name == "apply") return StalenessPolicy::kApply;
  if (name == "drop") return StalenessPolicy::kDrop;
  if (name == "scale") return StalenessPolicy::kScale;
  return InvalidArgument("--staleness_policy=" + name + " is not one of: apply, drop, scale");
}

StatusOr<LrSchedule> LrScheduleOf(const ShardConfig& config) {
  LrScheduleOptions options;
  options.learning_rate = config.optimizer.learning_rate;
  options.decay_steps = config.lr_decay_steps;
  options.decay_rate = config.lr_decay_rate;
  options.warmup_steps = config.lr_warmup_steps;
  options.lr_min = config.lr_min;
  return LrSchedule::Parse(config.lr_schedule, options);
}

Status CheckWeightDecay(const ShardConfig& config) {
  if (std::isfinite(config.weight_decay) && config.weight_decay >= 0) return Status::OK();
  std::ostringstream message;  // -0.5, not -0.500000
  message << "weight_decay must be finite and >= 0, got " << config.weight_decay;
  return InvalidArgument(message.str());
}

}  // namespace pst

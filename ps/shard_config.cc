#include "ps/shard_config.h"

namespace pst {

StatusOr<StalenessPolicy> ParseStalenessPolicy(const std::string& name) {
  if (name == "apply") return StalenessPolicy::kApply;
  if (name == "drop") return StalenessPolicy::kDrop;
  if (name == "scale") return StalenessPolicy::kScale;
  return InvalidArgument("--staleness_policy=" + name + " is not one of: apply, drop, scale");
}

}  // namespace pst

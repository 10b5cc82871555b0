// Named containers: several jobs share one ps cluster, each job's variables,
// optimizer slots, global step and sync state under its own name
// (--container), as TensorFlow's resource containers kept them. A request
// names its container in Header.container; none names the default one.
//
// A Container is one job's share of a shard. A named one belongs to the
// cluster (job) whose chief first initialized it: requests of another
// cluster are refused until that chief releases it (its shutdown) or
// another chief discards it (--reset_container).
#ifndef PST_PS_CONTAINER_H_
#define PST_PS_CONTAINER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "ps/variable_store.h"

namespace pst {

// OK for a name of 1 to 64 characters of [A-Za-z0-9._-], not "." or "..":
// it becomes a folder of the ps's --checkpoint_dir. InvalidArgument saying
// so otherwise, naming `flag` ("--container").
Status CheckContainerName(const std::string& name, const std::string& flag = "--container");

// Where a named container's chief hears from this shard: its sync step
// notices, and (kept up while the container lives) heartbeats.
class ContainerChief {
 public:
  virtual ~ContainerChief() = default;
  virtual void ShardApplied(int64_t step) = 0;
};
// Makes the link to a container's chief at `chief_port` on the ps's chief
// host, speaking for `cluster_id`.
using ContainerChiefFactory =
    std::function<std::unique_ptr<ContainerChief>(int chief_port, uint64_t cluster_id)>;

struct Container {
  explicit Container(std::string container_name) : name(std::move(container_name)) {}
  const std::string name;  // "" for the default container
  VariableStore store;
  uint64_t cluster_id = 0;                // named: the owner, fixed before the container is shared
  std::unique_ptr<ContainerChief> chief;  // named: null without a factory
  std::atomic<uint64_t> pulls{0};
  std::atomic<uint64_t> pushes{0};
};

// "" when `store` holds the variables `wanted` names with their shapes;
// else the first difference ("variable 'w' is [784,100] there, [784,300]
// here", "variable 'b' is not there", ...).
std::string ModelDifference(const std::map<std::string, Shape>& held,
                            const std::map<std::string, Shape>& wanted);

}  // namespace pst

#endif  // PST_PS_CONTAINER_H_

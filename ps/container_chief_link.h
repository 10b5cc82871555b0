// ContainerChiefLink: a named container's line to its own chief (each job
// sharing the ps has one): the container's sync step notices, and heartbeats
// for as long as the container lives, both speaking for its cluster.
#ifndef PST_PS_CONTAINER_CHIEF_LINK_H_
#define PST_PS_CONTAINER_CHIEF_LINK_H_

#include <chrono>
#include <cstdint>

#include "ps/container.h"
#include "ps/shard_applied_notifier.h"
#include "transport/heartbeat_sender.h"

namespace pst {

class ContainerChiefLink : public ContainerChief {
 public:
  // `transport` is borrowed and must outlive the link; `chief` names the
  // container's chief (its endpoint) and this ps (role, index, keys).
  ContainerChiefLink(Transport& transport, const ChannelOptions& chief,
                     std::chrono::milliseconds heartbeat_interval, uint64_t cluster_id)
      : cluster_id_(cluster_id),
        notifier_(transport, chief),
        heartbeat_(transport, chief, heartbeat_interval, [cluster_id] { return cluster_id; }) {}

  void ShardApplied(int64_t step) override { notifier_.ShardApplied(step, cluster_id_); }

 private:
  const uint64_t cluster_id_;
  ShardAppliedNotifier notifier_;
  HeartbeatSender heartbeat_;
};

}  // namespace pst

#endif  // PST_PS_CONTAINER_CHIEF_LINK_H_

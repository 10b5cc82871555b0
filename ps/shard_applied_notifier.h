// ShardAppliedNotifier: tells the chief that this shard has applied a sync step
// (DESIGN section 7). Fire-and-forget: the chief's acknowledgements are
// drained and ignored; a lost notice is repaired by the next one, since the
// chief keeps the highest step each shard reported.
//
// Thread safety: ShardApplied() may be called from any thread (the channel is
// used under a mutex).
#ifndef PST_PS_SHARD_APPLIED_NOTIFIER_H_
#define PST_PS_SHARD_APPLIED_NOTIFIER_H_

#include <memory>

#include "common/mutex.h"
#include "transport/transport.h"

namespace pst {

class ShardAppliedNotifier {
 public:
  // `transport` is borrowed and must outlive the notifier.
  ShardAppliedNotifier(Transport& transport, ChannelOptions chief);

  // Reports that `step` is applied, under `cluster_id`; by this ps's own
  // shard, or (`shard` >= 0, --ps_replicas) by the shard it is the primary of.
  void ShardApplied(int64_t step, uint64_t cluster_id, int shard = -1);

 private:
  Mutex mu_;
  const std::unique_ptr<Connection> channel_ GUARDED_BY(mu_);
};

}  // namespace pst

#endif  // PST_PS_SHARD_APPLIED_NOTIFIER_H_

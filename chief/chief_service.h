// ChiefService: answers workers' join requests and training reports, sync
// tokens and step notices, ssp clock requests, and every task's heartbeats.
#ifndef PST_CHIEF_CHIEF_SERVICE_H_
#define PST_CHIEF_CHIEF_SERVICE_H_

#include "chief/chief_state.h"
#include "chief/sync/ssp_coordinator.h"
#include "chief/sync/sync_coordinator.h"
#include "transport/request_context.h"

namespace pst {

class ChiefService {
 public:
  // `state`, `sync` (null unless --mode=sync) and `ssp` (null unless
  // --mode=ssp) are borrowed and must outlive the service.
  ChiefService(ChiefState* state, SyncCoordinator* sync, int num_workers, int num_ps,
               SspCoordinator* ssp = nullptr)
      : state_(state), sync_(sync), ssp_(ssp), num_workers_(num_workers), num_ps_(num_ps) {}

  OutgoingMessage Handle(const ReceivedMessage& request, RequestContext& context);

 private:
  // True when `h` comes from a task of this cluster with `role` (Ps or Worker).
  bool SentBy(const wire::Header& h, wire::Role role) const;
  OutgoingMessage StateReply(wire::MessageType type) const;
  OutgoingMessage StateReply(wire::MessageType type, wire::ClusterState state) const;
  OutgoingMessage HandleWorker(const ReceivedMessage& request, RequestContext& context);
  OutgoingMessage HandleShardApplied(const ReceivedMessage& request);
  OutgoingMessage HandleHeartbeat(const ReceivedMessage& request);
  void AdoptOnceOpen(int worker);

  ChiefState* state_;
  SyncCoordinator* sync_;
  SspCoordinator* ssp_;
  const int num_workers_;
  const int num_ps_;
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_SERVICE_H_

// ChiefService: answers workers' join requests and training reports, sync
// tokens and step notices, ssp clock requests, --follow's file requests, and
// every task's heartbeats.
#ifndef PST_CHIEF_CHIEF_SERVICE_H_
#define PST_CHIEF_CHIEF_SERVICE_H_

#include "chief/chief_state.h"
#include "chief/streaming/file_dispatcher.h"
#include "chief/sync/ssp_coordinator.h"
#include "chief/sync/sync_coordinator.h"
#include "ps/replica_router.h"
#include "transport/request_context.h"

namespace pst {

class ChiefService {
 public:
  // `state`, `sync` (null unless --mode=sync) and `ssp` (null unless
  // --mode=ssp) are borrowed and must outlive the service.
  // `routes` (null unless --ps_replicas > 1, borrowed) answers the
  // workers' RoutesRequest.
  // `files` (null unless --follow, borrowed) answers the workers'
  // FileRequest.
  ChiefService(ChiefState* state, SyncCoordinator* sync, int num_workers, int num_ps,
               SspCoordinator* ssp = nullptr, RouteSource* routes = nullptr, int ps_replicas = 1,
               FileDispatcher* files = nullptr)
      : state_(state),
        sync_(sync),
        ssp_(ssp),
        routes_(routes),
        files_(files),
        num_workers_(num_workers),
        num_ps_(num_ps),
        ps_replicas_(ps_replicas) {}

  OutgoingMessage Handle(const ReceivedMessage& request, RequestContext& context);

 private:
  // True when `h` comes from a task of this cluster with `role` (Ps or Worker).
  bool SentBy(const wire::Header& h, wire::Role role) const;
  // Replies carry the cluster's state (now, or `state`); types are set by
  // Handle, from the request's (ReplyTypeOf).
  OutgoingMessage StateReply() const;
  OutgoingMessage StateReply(wire::ClusterState state) const;
  OutgoingMessage Dispatch(const ReceivedMessage& request, RequestContext& context);
  OutgoingMessage HandleWorker(const ReceivedMessage& request, RequestContext& context);
  OutgoingMessage HandleShardApplied(const ReceivedMessage& request);
  OutgoingMessage HandleHeartbeat(const ReceivedMessage& request);
  OutgoingMessage HandleRoutes(const ReceivedMessage& request);
  OutgoingMessage HandleFileRequest(int worker, const wire::Header& h);
  void AdoptOnceOpen(int worker);

  ChiefState* state_;
  SyncCoordinator* sync_;
  SspCoordinator* ssp_;
  RouteSource* routes_;
  FileDispatcher* files_;
  const int num_workers_;
  const int num_ps_;
  const int ps_replicas_;
};

}  // namespace pst

#endif  // PST_CHIEF_CHIEF_SERVICE_H_

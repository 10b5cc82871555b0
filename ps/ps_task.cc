#include "ps/ps_task.h"

#include "common/signal_watcher.h"
#include "ps/ps_service.h"
#include "transport/heartbeat_sender.h"

namespace pst {

Status RunPs(const PsOptions& options) {
  // First, before any thread exists, so every thread inherits the blocked signals.
  std::atomic<RpcServer*> running{nullptr};
  std::atomic<bool> signalled{false};
  SignalWatcher signals([&running, &signalled](int signal) {
    LOG(INFO) << "signal " << signal << ": stopping";
    signalled.store(true);
    if (RpcServer* server = running.load()) server->Stop();
  });
  const HostPort& me = options.cluster.ps[options.task_index];
  ServerOptions server_options;
  server_options.name = "ps:" + std::to_string(options.task_index);
  server_options.endpoint = me.Endpoint();
  server_options.role = wire::Role::Ps;
  server_options.index = options.task_index;
  server_options.max_message_bytes = options.max_message_bytes;
  server_options.num_threads = options.num_threads;
  server_options.cluster_id = options.cluster_id;
  server_options.curve = options.curve;

  zmq::context_t context(1);
  ChannelOptions chief;
  chief.peer_name = "chief";
  chief.endpoint = options.cluster.chief.Endpoint();
  chief.role = wire::Role::Ps;
  chief.index = options.task_index;
  chief.curve = options.curve;
  StepNotifier notifier(context, chief);
  std::unique_ptr<PsService> service;
  RpcServer server(context, server_options,
                   [&service](const ReceivedMessage& r, RequestContext&) { return service->Handle(r); });
  service = std::make_unique<PsService>(
      &server, &notifier, PsServiceOptions{options.task_index, options.checkpoint_dir});
  PST_RETURN_IF_ERROR(server.Start());
  HeartbeatSender heartbeat(context, chief, options.heartbeat_interval,
                            [&server] { return server.cluster_id(); });
  running.store(&server);
  if (signalled.load()) server.Stop();
  LOG(INFO) << server_options.name << " serving on " << server.bound_endpoint();
  server.Wait();
  running.store(nullptr);
  LOG(INFO) << server_options.name << " stopped";
  return Status::OK();
}

}  // namespace pst

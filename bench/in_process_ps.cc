#include "bench/in_process_ps.h"

#include <glog/logging.h>

#include <string>

#include "bench/check_ok.h"
#include "transport/shm_options.h"

namespace pst {

zmq::context_t NamedZmqContext(int prefix) {
  zmq::context_t context(1);
  context.set(zmq::ctxopt::thread_name_prefix, prefix);  // before its threads start
  return context;
}

InProcessPs::InProcessPs(int num_threads, uint64_t cluster_id)
    : context_(NamedZmqContext(kPsZmqThreadPrefix)) {
  ServerOptions options;
  options.name = "ps:0";
  options.endpoint = "tcp://127.0.0.1:*";
  options.role = wire::Role::Ps;
  options.index = 0;
  options.num_threads = num_threads;
  options.cluster_id = cluster_id;
  options.serve_inline = [this](const ReceivedMessage& r) { return service_->Quick(r); };
  server_ = std::make_unique<RpcServer>(
      context_, options,
      [this](const ReceivedMessage& r, RequestContext&) { return service_->Handle(r); },
      // Takes the shared-memory rings a client offers, as a real ps does.
      DefaultShmOptions());
  // No chief here: no step notifier (async training never notifies).
  service_ = std::make_unique<PsService>(server_.get(), nullptr);
  CheckOk(server_->Start(), "starting the ps");
}

InProcessPs::~InProcessPs() {
  server_->Stop();
  server_->Wait();
  server_.reset();  // joins the handler threads before the service goes
}

ClusterSpec InProcessPs::Cluster() const {
  // bound_endpoint() resolves the wildcard: "tcp://127.0.0.1:N".
  const std::string& endpoint = server_->bound_endpoint();
  const std::string prefix = "tcp://";
  CHECK_EQ(endpoint.compare(0, prefix.size(), prefix), 0) << endpoint;
  StatusOr<HostPort> hp = ParseHostPort("ps", endpoint.substr(prefix.size()));
  CheckOk(hp.status(), "ps endpoint");
  ClusterSpec cluster;
  cluster.ps.push_back(*hp);
  return cluster;
}

}  // namespace pst

// A ps inside the benchmark's own process: an RpcServer + PsService wired as
// in ps/ps_task.cc (quick requests served inline), minus the chief's
// ShardAppliedNotifier, so async only. One shard, on 127.0.0.1, on a port the
// OS picks, with its own ZeroMQ context.
#ifndef PST_BENCH_IN_PROCESS_PS_H_
#define PST_BENCH_IN_PROCESS_PS_H_

#include <cstdint>
#include <memory>
#include <zmq.hpp>

#include "cluster/cluster_spec.h"
#include "ps/ps_service.h"
#include "transport/server.h"

namespace pst {

// ZeroMQ names a context's I/O threads "<prefix>/ZMQbg/IO/<n>"
// (ZMQ_THREAD_NAME_PREFIX): the in-process ps's context and its clients'
// take these, so a benchmark can tell their threads apart.
constexpr int kPsZmqThreadPrefix = 1;
constexpr int kClientZmqThreadPrefix = 2;
// A context of one I/O thread, its threads named with `prefix`.
zmq::context_t NamedZmqContext(int prefix);

class InProcessPs {
 public:
  // Serves clients of `cluster_id` only.
  InProcessPs(int num_threads, uint64_t cluster_id);
  ~InProcessPs();
  InProcessPs(const InProcessPs&) = delete;
  InProcessPs& operator=(const InProcessPs&) = delete;

  // A cluster of this one ps.
  ClusterSpec Cluster() const;
  // Bytes the ps received and sent so far.
  uint64_t bytes() const { return server_->bytes_in() + server_->bytes_out(); }

 private:
  zmq::context_t context_;
  std::unique_ptr<PsService> service_;
  std::unique_ptr<RpcServer> server_;  // last: destroyed first
};

}  // namespace pst

#endif  // PST_BENCH_IN_PROCESS_PS_H_

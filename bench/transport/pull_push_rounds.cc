#include "bench/transport/pull_push_rounds.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <zmq.hpp>

#include "bench/check_ok.h"
#include "bench/in_process_ps.h"
#include "bench/transport/bare_zmq.h"
#include "bench/transport/ps_settings.h"
#include "cluster/placement.h"
#include "common/tensor.h"
#include "ps/ps_client.h"
#include "ps/shard_admin.h"
#include "transport/shm_options.h"
#include "transport/zmq_transport.h"

namespace pst {
namespace {

Tensor Filled(const std::vector<int64_t>& shape, float value) {
  Tensor t(DType::kFloat32, shape);
  std::fill(t.f32(), t.f32() + t.num_elements(), value);
  return t;
}

}  // namespace

std::vector<PullPushResult> RunPullPushRounds(const std::vector<size_t>& sizes,
                                              const TimingPlan& plan, int ps_threads) {
  // The framework side: one variable per size on one ps shard.
  std::vector<VariableSpec> specs;
  std::vector<Tensor> initial, grads;
  for (size_t bytes : sizes) {
    VariableSpec spec;
    spec.name = "var_" + std::to_string(bytes);
    spec.shape = {static_cast<int64_t>(bytes / 4)};
    specs.push_back(spec);
    initial.push_back(Filled(spec.shape, 0.5f));
    grads.push_back(Filled(spec.shape, 1e-3f));
  }
  PlacementOptions placement_options;
  placement_options.num_shards = 1;
  StatusOr<Placement> placement = Placement::Compute(specs, placement_options);
  CheckOk(placement.status(), "placement");

  InProcessPs ps(ps_threads, kBenchClusterId);
  zmq::context_t client_context(1);
  ZmqTransport client_transport(client_context, ShmOptions());  // TCP only
  ZmqTransport shm_transport(client_context, ShmOptions{ShmMode::kAuto, size_t{16} << 20});
  PsClient client(client_transport, ps.Cluster(), std::move(placement).value(), BenchIdentity());
  CheckOk(ShardAdmin(&client).Initialize(SgdConfig(), initial), "initialize");
  ClientIdentity narrow_identity = BenchIdentity();
  narrow_identity.wire_dtype = DType::kBFloat16;
  PsClient narrow_client(client_transport, ps.Cluster(), client.placement(), narrow_identity);
  // The shared-memory client has a ps of its own: a ps with a client on
  // its host also waits on that client's bells (ShmServerPeers), and the
  // TCP rounds are to show a ps whose workers are on other hosts, as bare
  // ZeroMQ's server serves one TCP client.
  InProcessPs shm_ps(ps_threads, kBenchClusterId);
  PsClient shm_client(shm_transport, shm_ps.Cluster(), client.placement(), BenchIdentity());
  CheckOk(ShardAdmin(&shm_client).Initialize(SgdConfig(), initial), "initialize");

  BareServer bare_server(sizes);
  BareClient bare(bare_server.endpoint(), sizes);

  const double slice_s = plan.seconds_per_repeat / plan.slices;
  std::vector<PullPushResult> results;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const std::vector<int> variable = {static_cast<int>(k)};
    const std::vector<Tensor> grad = {grads[k]};
    std::vector<Tensor> values;
    // One checked round before timing.
    CheckOk(client.Pull(variable, &values), "pull");
    CHECK_EQ(values[0].num_bytes(), sizes[k]);
    StatusOr<PushSummary> pushed = client.Push(variable, grad, false);
    CheckOk(pushed.status(), "push");
    CHECK_EQ(pushed->applied, 1u);

    auto fw_pull = [&] { CheckOk(client.Pull(variable, &values), "pull"); };
    auto fw_push = [&] { CheckOk(client.Push(variable, grad, false).status(), "push"); };
    auto bf16_pull = [&] { CheckOk(narrow_client.Pull(variable, &values), "pull"); };
    auto bf16_push = [&] { CheckOk(narrow_client.Push(variable, grad, false).status(), "push"); };
    auto shm_pull = [&] { CheckOk(shm_client.Pull(variable, &values), "pull"); };
    auto shm_push = [&] { CheckOk(shm_client.Push(variable, grad, false).status(), "push"); };
    // Wire bytes of one round each, from the ps's own counters.
    uint64_t before = ps.bytes();
    fw_pull();
    fw_push();
    const double f32_round_bytes = ps.bytes() - before;
    before = ps.bytes();
    bf16_pull();
    bf16_push();
    const double bf16_round_bytes = ps.bytes() - before;
    const uint32_t index = static_cast<uint32_t>(k);
    auto zmq_pull = [&bare, index] { bare.Pull(index); };
    auto zmq_push = [&bare, index] { bare.Push(index); };

    RoundTimer framework(fw_pull, fw_push), baseline(zmq_pull, zmq_push),
        narrow(bf16_pull, bf16_push), shared(shm_pull, shm_push);
    framework.WarmUp(5, plan.warmup_s);
    baseline.WarmUp(5, plan.warmup_s);
    narrow.WarmUp(5, plan.warmup_s);
    shared.WarmUp(5, plan.warmup_s);
    PullPushResult result;
    result.bytes = sizes[k];
    result.bf16_wire_ratio = bf16_round_bytes / f32_round_bytes;
    for (int rep = 0; rep < plan.repeats; ++rep) {
      // Framework and baseline alternate in short slices (and swap which
      // goes first), so that load from elsewhere hits both alike.
      for (int slice = 0; slice < plan.slices; ++slice) {
        if ((rep + slice) % 2 == 0) {
          framework.Slice(slice_s);
          baseline.Slice(slice_s);
          narrow.Slice(slice_s);
          shared.Slice(slice_s);
        } else {
          shared.Slice(slice_s);
          narrow.Slice(slice_s);
          baseline.Slice(slice_s);
          framework.Slice(slice_s);
        }
      }
      result.framework.push_back(framework.TakeRepeat(sizes[k]));
      result.bare.push_back(baseline.TakeRepeat(sizes[k]));
      result.bf16.push_back(narrow.TakeRepeat(sizes[k]));
      result.shm.push_back(shared.TakeRepeat(sizes[k]));
    }
    results.push_back(std::move(result));
  }
  bare.Stop();
  return results;
}

}  // namespace pst

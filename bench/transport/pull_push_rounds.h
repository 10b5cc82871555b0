// Sections 1, 1b and 2 of bench_transport: pull+push rounds of one variable
// per size through the framework (an in-process ps and a PsClient, float32
// and --wire_dtype=bfloat16 on the wire, over TCP; float32 again with the
// payloads through shared memory) and through bare ZeroMQ.
#ifndef PST_BENCH_TRANSPORT_PULL_PUSH_ROUNDS_H_
#define PST_BENCH_TRANSPORT_PULL_PUSH_ROUNDS_H_

#include <cstddef>
#include <vector>

#include "bench/transport/round_timer.h"
#include "bench/transport/timing_plan.h"

namespace pst {

// The repeats of one size.
struct PullPushResult {
  size_t bytes = 0;
  std::vector<Repeat> framework, bare;
  // The framework with --shm=auto: headers over TCP, payloads through the
  // shared-memory rings (a ring of 16 MiB each way).
  std::vector<Repeat> shm;
  // The framework with --wire_dtype=bfloat16; its bytes/s count the float32
  // payload it stands for, and its wire bytes per round over float32's.
  std::vector<Repeat> bf16;
  double bf16_wire_ratio = 0;
};

// One result per size (bytes, multiples of 4), in order; the ps has
// `ps_threads` handler threads.
std::vector<PullPushResult> RunPullPushRounds(const std::vector<size_t>& sizes,
                                              const TimingPlan& plan, int ps_threads);

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_PULL_PUSH_ROUNDS_H_

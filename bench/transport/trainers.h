// The training loops bench_transport compares: 1 ps + 1 worker, and the
// same model with the same optimizer in one process.
#ifndef PST_BENCH_TRANSPORT_TRAINERS_H_
#define PST_BENCH_TRANSPORT_TRAINERS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "bench/in_process_ps.h"
#include "common/batch.h"
#include "common/tensor.h"
#include "model/model.h"
#include "ps/optimizers/optimizer.h"
#include "ps/ps_client.h"
#include "transport/shm_options.h"
#include "transport/zmq_transport.h"
#include "worker/gradient_streamer.h"

namespace pst {

// A training loop that runs steps over the batches, cycling.
class Trainer {
 public:
  virtual ~Trainer() = default;
  // Returns the loss of the last step.
  float Run(const std::vector<Batch>& batches, int64_t steps);

 protected:
  virtual float Step(const Batch& batch) = 0;

 private:
  uint64_t cursor_ = 0;
};

// 1 ps + 1 worker: the loop of async worker/worker_task.cc against an
// in-process ps. `shm`: over TCP (ShmOptions()) or shared memory. Without
// `overlap_bucket_bytes`, as --overlap=off: ComputeGradients then
// PushThenPull (the push, and the next step's pull of all model variables
// right behind it). With it, as --overlap=on --push_bucket_bytes=N: the
// gradients pushed as backprop makes them, the acknowledgement collected
// during the next step (GradientStreamer).
class ClusterTrainer : public Trainer {
 public:
  ClusterTrainer(const std::string& model_name, const std::vector<Tensor>& initial, int ps_threads,
                 ShmOptions shm, std::optional<int64_t> overlap_bucket_bytes);
  ~ClusterTrainer() override;
  // Once the push in flight (overlap) is acknowledged.
  int64_t global_step();
  // Where the training thread's steps went (overlap only, else nullptr).
  const StepPhases* phases() const { return streamer_ ? &streamer_->phases() : nullptr; }

 protected:
  float Step(const Batch& batch) override;

 private:
  InProcessPs ps_;
  zmq::context_t context_;
  ZmqTransport transport_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PsClient> client_;
  std::unique_ptr<GradientStreamer> streamer_;  // overlap only
  std::vector<int> variables_;
  std::vector<Tensor> params_, grads_;
  std::vector<std::vector<Tensor>> spare_grads_;  // see TakeWritableGradients
  bool pulled_ = false;                           // params_ hold the values for the next step
  int64_t global_step_ = 0;
};

// The same model in one process: gradients, then SGD applied locally.
class LocalTrainer : public Trainer {
 public:
  LocalTrainer(const std::string& model_name, const std::vector<Tensor>& initial);

 protected:
  float Step(const Batch& batch) override;

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<Tensor> params_, grads_;
  std::vector<SlotSet> slots_;
};

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_TRAINERS_H_

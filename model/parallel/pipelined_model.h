// PipelinedModel: model parallelism. The layer stack is cut into stages
// (consecutive slices, model/parallel/pipeline_split.h), each a PipelineStage on its
// own Kernels and its own thread (a ThreadTeam index, so per-thread device
// state stays put), the last with the loss. A step cuts the batch into
// micro-batches (contiguous, sizes as equal as possible, at most
// micro_batches of them and none empty) and runs a GPipe schedule: each
// stage runs the forwards of micro-batches 0, 1, ... as soon as the
// previous stage has handed each on, so micro-batch m on stage k overlaps
// micro-batch m+1 on stage k-1; then the backwards in reverse order, each
// stage as soon as the next has handed back the micro-batch's gradient.
// The loss and the gradients are the micro-batch-size-weighted means of
// the micro-batches' (each a mean over its examples): the whole batch's
// mean-loss gradient. Evaluate and Predict run the forwards pipelined the
// same way.
//
// The variables are the stack's, in its order (each stage's are its
// layers'); they still live on the parameter servers like any model's.
// Each stage keeps every micro-batch's activations until its backward (as
// GPipe does): what the unsplit model keeps for the batch, spread over the
// stages. Buffers are sized for the largest batch seen and reused. Owns its stages
// and threads. Not thread-safe, like every Model.
#ifndef PST_MODEL_PARALLEL_PIPELINED_MODEL_H_
#define PST_MODEL_PARALLEL_PIPELINED_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/parallel/pipeline_stage.h"
#include "model/parallel/progress_counter.h"
#include "model/parallel/thread_team.h"

namespace pst {

class PipelinedModel : public Model {
 public:
  // At least one stage, chaining (stage k's out_dim is stage k+1's in_dim),
  // the first built with first = true, the last with last = true, every
  // stage with at least `micro_batches` slots (CHECKed).
  PipelinedModel(std::vector<std::unique_ptr<PipelineStage>> stages, int micro_batches);

  const std::vector<VariableSpec>& variables() const override { return variables_; }
  int64_t input_dim() const override { return stages_.front()->in_dim(); }
  int64_t num_classes() const override { return stages_.back()->out_dim(); }
  // The stages' devices, comma-separated: "cpu,cpu", "gpu:0,gpu:1".
  const std::string& device() const override { return device_; }
  // Each stage's lines, prefixed "stage k: ".
  std::vector<std::string> Placement() const override;

  StatusOr<float> ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                   std::vector<Tensor>* grads) override;
  StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params, const Batch& batch) override;
  Status Predict(const std::vector<Tensor>& params, const Batch& batch,
                 std::vector<float>* probabilities) override;

 private:
  int num_stages() const { return static_cast<int>(stages_.size()); }
  int num_micro() const { return static_cast<int>(micro_sizes_.size()); }
  // Sets the micro-batches of a batch of `batch_size` examples, hands each
  // stage its slice of `params` (and of *grads unless null), and reserves
  // every stage's buffers on its own thread.
  Status Prepare(int64_t batch_size, const std::vector<Tensor>& params, std::vector<Tensor>* grads);
  enum class Pass { kTrain, kEvaluate, kPredict };
  // Stage k's part of a step: its forwards; on the last stage, for
  // kEvaluate, the batch's eval_ and, for kPredict, its logits_; for kTrain
  // its backwards. Runs on the stage's thread.
  void RunStage(int k, const Batch& batch, Pass pass);
  // OK, or the first failed stage's error, naming the stage.
  Status FirstError() const;

  const std::vector<std::unique_ptr<PipelineStage>> stages_;
  const int micro_batches_;
  std::vector<VariableSpec> variables_;
  std::vector<size_t> first_variable_;  // per stage, into variables_
  std::string device_;

  // The current step: each micro-batch's first row and size, its loss, and
  // per stage its parameters, gradients (views of the caller's tensors)
  // and status.
  std::vector<int64_t> micro_rows_, micro_sizes_;
  std::vector<float> micro_losses_;
  EvalResult eval_;
  std::vector<float> logits_;
  std::vector<std::vector<Tensor>> stage_params_, stage_grads_;
  std::vector<Status> statuses_;
  // Per stage, the micro-batches it has handed on forward and backward.
  std::vector<std::unique_ptr<ProgressCounter>> forward_done_, backward_done_;

  // Declared last: its threads stop before the state they use is destroyed.
  ThreadTeam team_;
};

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_PIPELINED_MODEL_H_

// PipelineStage: one stage of a PipelinedModel, a consecutive slice of the
// layer stack on its own Kernels, the last stage with the loss. It runs
// micro-batches: rows [row, row + size) of the step's batch, each through
// its own copy of the slice's layers (a "slot"), so that the state a
// layer keeps for its backward pass (max-pool's argmax, dropout's mask)
// survives until that micro-batch's backward even when later micro-batches
// went forward meanwhile.
//
// Activations and their gradients are held for the whole batch (each
// micro-batch its rows), in the stage's memory. Stages exchange them
// through host views: a stage's output and its input gradient as host
// memory, the stage's own buffers on a host-memory back end (no copies on
// the CPU), else host copies it makes.
//
// Owns its Kernels and layers. Not thread-safe: one thread drives a stage.
#ifndef PST_MODEL_PARALLEL_PIPELINE_STAGE_H_
#define PST_MODEL_PARALLEL_PIPELINE_STAGE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"
#include "kernels/kernels.h"
#include "model/device_io.h"
#include "model/layers/layer.h"
#include "model/layers/softmax_cross_entropy.h"

namespace pst {

class PipelineStage {
 public:
  using Layers = std::vector<std::unique_ptr<Layer>>;
  // slots[s] is slot s's copy of the slice, on `kernels` (at least one
  // slot, all alike, chaining; CHECKed). `first`: the stage reads the
  // batch's features (and computes no input gradient); `last`: it ends in
  // the loss.
  PipelineStage(std::unique_ptr<Kernels> kernels, std::vector<Layers> slots, bool first, bool last);

  int num_slots() const { return static_cast<int>(slots_.size()); }
  int64_t in_dim() const { return layers().front()->in_dim(); }
  int64_t out_dim() const { return layers().back()->out_dim(); }
  const std::vector<VariableSpec>& variables() const { return variables_; }
  const std::string& device() const { return kernels_->device(); }
  // One line per layer (and the loss), "dense0 (Dense 784->100) on cpu".
  std::vector<std::string> Placement() const;

  // Sizes the buffers for a step of `batch` examples whose micro-batch in
  // slot s has slot_sizes[s] examples; with `backward`, the gradient buffers
  // too. Allocates only what grows. Errors: the Kernels' Allocate.
  Status Reserve(int64_t batch, const std::vector<int64_t>& slot_sizes, bool backward);

  // The step's parameters (this stage's variables, validated) and, for a
  // backward pass, the host tensors its gradients go to (shaped like
  // variables()); the last stage also takes the batch's labels (host).
  void SetParams(const std::vector<Tensor>& params);
  void SetGrads(std::vector<Tensor>* grads) { grads_ = grads; }
  void SetLabels(const int32_t* labels, int64_t batch);

  // Forward of micro-batch rows [row, row + size) in `slot`; `input` is the
  // host view of the whole batch's input (the features, or the previous
  // stage's output()).
  void Forward(int slot, int64_t row, int64_t size, const float* input, bool training);
  // Last stage, after Forward: the micro-batch's mean loss, and its logits'
  // gradient for the Backward.
  float Loss(int64_t row, int64_t size);
  // After Forward (and, on the last stage, Loss) of the same micro-batch:
  // adds `weight` times its gradients (of its mean loss) into the host
  // grads; the first micro-batch of a step, `first`, overwrites them. `dy`
  // is the host view of the next stage's input_grad() (null on the last).
  void Backward(int slot, int64_t row, int64_t size, const float* dy, float weight, bool first);

  // Host views, rows as in the batch, valid after the Forward (Backward)
  // of a micro-batch for its rows; input_grad() is null on the first stage.
  const float* output() const { return output_host_; }
  const float* input_grad() const { return input_grad_host_; }

  // Last stage, after the Forwards of all rows [0, batch): over the whole
  // batch, the loss sum, the correct count, and the logits copied to host.
  double LossSum(int64_t batch);
  int64_t CountCorrect(int64_t batch);
  void CopyLogits(int64_t batch, float* host);

  // The back end's error of the step, if any.
  Status TakeError() { return kernels_->TakeError(); }

 private:
  const Layers& layers() const { return slots_.front(); }
  // Points at rows [row, row + size) of `host` (rows of `dim` floats) in
  // the stage's memory: the host rows themselves on a host-memory back end,
  // else copied into the same rows of `buffer`.
  const float* ToDevice(const float* host, DeviceBuffer* buffer, int64_t row, int64_t size,
                        int64_t dim);
  // Makes rows [row, row + size) of `device` visible at the same rows of
  // the host view: a copy into `host`, unless the back end's memory is host.
  void ToHost(const float* device, std::vector<float>* host, int64_t row, int64_t size,
              int64_t dim);

  // Declared first: destroyed after everything that borrows it.
  const std::unique_ptr<Kernels> kernels_;
  const std::vector<Layers> slots_;
  const bool first_;
  const bool last_;
  std::vector<VariableSpec> variables_;
  std::vector<size_t> first_variable_;         // per layer, into variables_
  std::unique_ptr<SoftmaxCrossEntropy> loss_;  // last stage only
  DeviceIo io_;
  std::vector<Tensor>* grads_ = nullptr;
  // The micro-batch's gradients before they are added into *grads_.
  std::vector<Tensor> scratch_grads_;

  // Whole-batch buffers in the stage's memory: the input (null on a
  // host-memory back end, which reads the host view), each layer's output
  // and its gradient, the input's gradient, and the labels.
  std::unique_ptr<DeviceBuffer> input_, input_grad_, labels_buffer_;
  std::vector<std::unique_ptr<DeviceBuffer>> activations_, activation_grads_;
  // The current step's input (host view) and labels (the stage's memory).
  const float* input_host_ = nullptr;
  const int32_t* labels_ = nullptr;
  // Host copies behind output() and input_grad() (unused on the CPU).
  std::vector<float> output_copy_, input_grad_copy_;
  const float* output_host_ = nullptr;
  const float* input_grad_host_ = nullptr;
};

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_PIPELINE_STAGE_H_

// SequentialModel: a stack of layers topped by softmax cross-entropy, on one
// Kernels back end.
//
// Every buffer a kernel touches is in the back end's memory: activations,
// their gradients and the layers' own state are allocated through the
// Kernels, sized for the largest batch seen so far and reused, so a steady
// batch size allocates nothing per step; parameters, batches and gradients
// go through a DeviceIo (no copies on the CPU). Not thread-safe.
#ifndef PST_MODEL_SEQUENTIAL_MODEL_H_
#define PST_MODEL_SEQUENTIAL_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/device_io.h"
#include "model/layers/layer.h"
#include "model/layers/softmax_cross_entropy.h"
#include "model/model.h"

namespace pst {

class SequentialModel : public Model {
 public:
  // Owns `kernels` and `layers`; the layers (which borrow the kernels) must
  // chain: layers[i].out_dim() == layers[i+1].in_dim() (CHECKed), and the
  // last out_dim() is the number of classes (at least 2).
  SequentialModel(std::unique_ptr<Kernels> kernels, std::vector<std::unique_ptr<Layer>> layers);

  const std::vector<VariableSpec>& variables() const override { return variables_; }
  int64_t input_dim() const override { return layers_.front()->in_dim(); }
  int64_t num_classes() const override { return loss_.num_classes(); }
  const std::string& device() const override { return kernels_->device(); }
  std::vector<std::string> Placement() const override;

  StatusOr<float> ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                   std::vector<Tensor>* grads) override;
  // Reports each layer's variables as its backward pass ends; on a device,
  // after copying them to the host.
  StatusOr<float> ComputeGradientsStreamed(const std::vector<Tensor>& params, const Batch& batch,
                                           std::vector<Tensor>* grads,
                                           const GradientsReady& ready) override;
  StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params, const Batch& batch) override;
  Status Predict(const std::vector<Tensor>& params, const Batch& batch,
                 std::vector<float>* probabilities) override;

 private:
  // Sizes every buffer of a step on `batch` examples (and, for a backward
  // pass, the gradient buffers); allocates only what grows.
  Status Reserve(int64_t batch, bool backward);
  // Runs every layer on io_'s features; returns the logits (B, num_classes).
  const float* Forward(int64_t batch, bool training);

  // Declared first so that it is destroyed after everything that borrows it
  // or holds its buffers.
  const std::unique_ptr<Kernels> kernels_;
  const std::vector<std::unique_ptr<Layer>> layers_;
  SoftmaxCrossEntropy loss_;
  std::vector<VariableSpec> variables_;
  // layers_[i]'s variables are variables_[first_variable_[i]...].
  std::vector<size_t> first_variable_;
  DeviceIo io_;

  // activations_[i] is layers_[i]'s output (B, out_dim), and
  // activation_grads_[i] the loss gradient with respect to it.
  std::vector<std::unique_ptr<DeviceBuffer>> activations_;
  std::vector<std::unique_ptr<DeviceBuffer>> activation_grads_;
};

}  // namespace pst

#endif  // PST_MODEL_SEQUENTIAL_MODEL_H_

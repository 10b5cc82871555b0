// SequentialModel: a stack of layers topped by softmax cross-entropy.
//
// Activations and their gradients live in buffers sized for the last batch
// size seen; a steady batch size allocates nothing per step. Not thread-safe.
#ifndef PST_MODEL_SEQUENTIAL_MODEL_H_
#define PST_MODEL_SEQUENTIAL_MODEL_H_

#include <memory>
#include <vector>

#include "kernels/kernels.h"
#include "model/layer.h"
#include "model/model.h"
#include "model/softmax_cross_entropy.h"

namespace pst {

class SequentialModel : public Model {
 public:
  // Owns `kernels` and `layers`; the layers (which borrow the kernels) must
  // chain: layers[i].out_dim() == layers[i+1].in_dim() (CHECKed), and the
  // last out_dim() is the number of classes (at least 2).
  SequentialModel(std::unique_ptr<Kernels> kernels,
                  std::vector<std::unique_ptr<Layer>> layers);

  const std::vector<VariableSpec>& variables() const override {
    return variables_;
  }
  int64_t input_dim() const override { return layers_.front()->in_dim(); }
  int64_t num_classes() const override { return loss_.num_classes(); }

  StatusOr<float> ComputeGradients(const std::vector<Tensor>& params,
                                   const Batch& batch,
                                   std::vector<Tensor>* grads) override;
  StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params,
                                const Batch& batch) override;

 private:
  Status ValidateParams(const std::vector<Tensor>& params) const;
  Status ValidateBatch(const Batch& batch) const;
  Status AllocateOrCheckGrads(std::vector<Tensor>* grads) const;
  // Points param_ptrs_ at `params` and sizes the activation buffers (and,
  // for a backward pass, their gradients) for `batch_size`.
  void Prepare(const std::vector<Tensor>& params, int64_t batch_size,
               bool backward);
  // Runs every layer; returns the logits (B, num_classes).
  const float* Forward(const Batch& batch, bool training);

  // Declared first so that it is destroyed after the layers that borrow it.
  const std::unique_ptr<Kernels> kernels_;
  const std::vector<std::unique_ptr<Layer>> layers_;
  SoftmaxCrossEntropy loss_;
  std::vector<VariableSpec> variables_;
  // layers_[i]'s variables are variables_[first_variable_[i]...].
  std::vector<size_t> first_variable_;

  // Per-call views of params and grads, sized once.
  std::vector<const float*> param_ptrs_;
  std::vector<float*> grad_ptrs_;
  // activations_[i] is layers_[i]'s output (B, out_dim), and
  // activation_grads_[i] the loss gradient with respect to it.
  std::vector<std::vector<float>> activations_;
  std::vector<std::vector<float>> activation_grads_;
};

}  // namespace pst

#endif  // PST_MODEL_SEQUENTIAL_MODEL_H_

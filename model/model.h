// Model: what a worker trains. It declares its variables and turns parameter
// values and a batch into a loss and gradients; it owns no parameter values
// (those live on the parameter servers). Parameters, gradients and batches
// are host memory whatever device the model computes on: the model moves
// them to and from its device itself.
//
// Thread safety: a Model is NOT thread-safe (it reuses internal scratch
// buffers); use one Model per worker thread.
#ifndef PST_MODEL_MODEL_H_
#define PST_MODEL_MODEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/batch.h"
#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"

namespace pst {

class Model {
 public:
  virtual ~Model() = default;

  // Variables in creation order (placement follows this order), named like
  // "dense0/weights", "dense0/bias".
  virtual const std::vector<VariableSpec>& variables() const = 0;

  // Embedding tables (sparse models, model/ctr/ctr_model.h; none for dense
  // ones). For a model with tables, the params of ComputeGradients,
  // Evaluate and Predict hold, after one tensor per variable, one [n_t,
  // dim_t] tensor per table t: the rows of RowIds(batch)[t], in that order;
  // and ComputeGradients' grads hold, after the variables' gradients, each
  // table's row gradients in the same layout (duplicates summed).
  virtual const std::vector<EmbeddingTableSpec>& tables() const {
    static const std::vector<EmbeddingTableSpec> kNone;
    return kNone;
  }
  // The row ids a batch reads from each table (one list per table, in the
  // order of tables()), unique, in the order of their first appearance
  // (empty without tables).
  virtual TableRowIds RowIds(const Batch& /*batch*/) const { return {}; }

  virtual int64_t input_dim() const = 0;    // Batch::feature_dim it accepts
  virtual int64_t num_classes() const = 0;  // labels lie in [0, num_classes)

  // Where it computes: "cpu", "gpu:0", or for a tower model the
  // comma-separated list of its towers' devices ("gpu:0,gpu:1").
  virtual const std::string& device() const = 0;
  // Where each layer runs, one line per layer and one for the loss, for
  // --log_device_placement: "conv0 (Conv2D 5x5x1->20) on gpu:0". A
  // tower model lists each tower's lines prefixed "tower i: ".
  virtual std::vector<std::string> Placement() const = 0;

  // Forward and backward on `batch`. params[i] matches variables()[i] (shape
  // and dtype). Fills *grads with the gradient of the mean loss, one tensor
  // per variable: allocated here if *grads is empty, otherwise written in
  // place (so the caller must not pass tensors still shared with an
  // unfinished send). Returns the mean loss over the batch.
  // Errors: InvalidArgument when params, grads or the batch (size,
  // feature_dim, labels) do not match the model; ResourceExhausted when the
  // device has no memory left for the batch; a failure the device reported
  // during the step (a CUDA error, naming the device), after which *grads
  // is unspecified.
  virtual StatusOr<float> ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                           std::vector<Tensor>* grads) = 0;

  // Called by ComputeGradientsStreamed once the gradients of variables
  // [first, end) are final in *grads, on the host; each variable is
  // reported exactly once, and any bytes not yet reported may still be
  // written.
  using GradientsReady = std::function<void(int first, int end)>;
  // ComputeGradients, reporting the gradients as they are ready: a model
  // that differentiates layer by layer reports each layer's variables as
  // its backward pass ends (last layer first), so a caller can send them
  // while earlier layers are still being differentiated (wait-free
  // backpropagation). This default reports all of them at the end. On an
  // error, what was reported before it was computed correctly.
  virtual StatusOr<float> ComputeGradientsStreamed(const std::vector<Tensor>& params,
                                                   const Batch& batch, std::vector<Tensor>* grads,
                                                   const GradientsReady& ready) {
    StatusOr<float> loss = ComputeGradients(params, batch, grads);
    if (loss.ok()) ready(0, static_cast<int>(variables().size()));
    return loss;
  }

  struct EvalResult {
    double loss_sum = 0;  // sum over the examples of their loss
    int64_t correct = 0;  // examples whose argmax prediction is the label
    int64_t count = 0;    // examples evaluated
  };
  // Forward only. Errors as for ComputeGradients.
  virtual StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params, const Batch& batch) = 0;

  // Forward only: each example's class probabilities (the softmax of its
  // logits), batch.size x num_classes() row-major, into *probabilities
  // (resized). batch.labels are not read. Errors as for ComputeGradients.
  virtual Status Predict(const std::vector<Tensor>& params, const Batch& batch,
                         std::vector<float>* probabilities) = 0;

  // Binary models (click models): P(label 1) of each example of the last
  // ComputeGradients' batch, as its forward pass computed it (dropout and
  // batch norm in training mode), before any update: progressive
  // validation (--follow). False for a model that does not keep them.
  virtual bool LastTrainingProbabilities(std::vector<float>* /*out*/) const { return false; }
};

}  // namespace pst

#endif  // PST_MODEL_MODEL_H_

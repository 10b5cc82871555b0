// CtrModel: a click-through-rate model over sparse features, with its
// embedding tables on the ps (pulled and pushed by row, never whole):
//
//   deep: a [rows, dim] table shared by every field (keys are field-aware
//         hashes, so fields do not collide by design); each field's entries'
//         rows combined (sum, or mean: weighted by the entries' values) into
//         one dim vector; the fields' vectors, after the dense features,
//         feed dense layers (ReLU) down to one logit;
//   wide: (optional) a [rows, 1] table: one weight per key, the entries'
//         weights (times their values) summed into the logit.
//   p = sigmoid(deep + wide), binary log-loss. As a Model it has two
//   classes: Predict gives (1 - p, p) per example.
//
// Every table has the same rows: a key's row id is key mod rows, in
// [0, rows), for fixed tables (hash buckets, as TensorFlow's
// categorical_column_with_hash_bucket),
// the key itself for dynamic ones (rows == 0), so one list of row ids
// (RowIds) serves every table. Runs on the CPU only (the GPU back end
// leaves the embedding layer on the CPU: soft placement). Not thread-safe.
#ifndef PST_MODEL_CTR_MODEL_H_
#define PST_MODEL_CTR_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/layer.h"
#include "model/model.h"

namespace pst {

enum class Combiner { kSum, kMean, kSqrtN };

struct CtrModelConfig {
  int64_t dense_features = 0;  // Batch::feature_dim
  int num_fields = 0;          // Batch::num_fields (> 0)
  int64_t embedding_dim = 8;
  bool mean_combiner = false;  // sum when false
  bool wide = true;
  std::vector<int64_t> hidden = {64, 32};  // ReLU layers before the logit
  int64_t table_rows = 0;                  // fixed tables' rows; 0: dynamic
  // Per field; empty: every field uses mean_combiner's choice.
  std::vector<Combiner> field_combiners;
};

// "wide_deep": the standard click model (embedding dim 8, dense 64-32, wide
// part), for `dense_features`, `num_fields` and `table_rows`.
CtrModelConfig WideDeepConfig(int64_t dense_features, int num_fields, int64_t table_rows);

class CtrModel : public Model {
 public:
  // InvalidArgument for a config out of range; the Kernels' errors.
  static StatusOr<std::unique_ptr<CtrModel>> Create(const CtrModelConfig& config,
                                                    const KernelsOptions& kernels = {});

  const std::vector<VariableSpec>& variables() const override { return variables_; }
  const std::vector<EmbeddingTableSpec>& tables() const override { return tables_; }
  std::vector<int64_t> RowIds(const Batch& batch) const override;
  int64_t input_dim() const override { return config_.dense_features; }
  int64_t num_classes() const override { return 2; }
  const std::string& device() const override { return kernels_->device(); }
  std::vector<std::string> Placement() const override;

  StatusOr<float> ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                   std::vector<Tensor>* grads) override;
  StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params, const Batch& batch) override;
  Status Predict(const std::vector<Tensor>& params, const Batch& batch,
                 std::vector<float>* probabilities) override;

  const CtrModelConfig& config() const { return config_; }

 private:
  CtrModel(const CtrModelConfig& config, std::unique_ptr<Kernels> kernels);

  // Where each sparse entry's row sits in RowIds(batch).
  std::vector<int32_t> RowSlots(const Batch& batch, std::vector<int64_t>* ids) const;
  // InvalidArgument unless params (and the batch) fit the model.
  Status Check(const std::vector<Tensor>& params, const Batch& batch, size_t num_rows) const;
  // Fills logits_ (B) from params; keeps what Backward needs.
  void Forward(const std::vector<Tensor>& params, const Batch& batch,
               const std::vector<int32_t>& slots, bool training);

  const CtrModelConfig config_;
  const std::unique_ptr<Kernels> kernels_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<VariableSpec> variables_;
  std::vector<EmbeddingTableSpec> tables_;
  std::vector<size_t> first_variable_;  // layers_[i]'s variables start here
  int64_t deep_width_ = 0;              // dense features + fields x dim

  // Scratch, sized for the largest batch so far.
  std::vector<float> deep_input_;                // B x deep_width_
  std::vector<float> field_weight_;              // B x fields: the mean combiner's divisor
  std::vector<std::vector<float>> activations_;  // layers_[i]'s output
  std::vector<std::vector<float>> activation_grads_;
  std::vector<float> input_grad_;  // B x deep_width_
  std::vector<float> logits_;      // B
};

}  // namespace pst

#endif  // PST_MODEL_CTR_MODEL_H_

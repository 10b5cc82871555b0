// CtrModel: a click-through-rate model over sparse features, with its
// embedding tables on the ps (pulled and pushed by row, never whole). Its
// parts, each chosen by CtrModelConfig (the zoo's models in model/ctr/ctr_spec.h
// are sets of them):
//
//   field vectors: a [rows, dim] table shared by every field (keys are
//         field-aware hashes, so fields do not collide by design), or one
//         per dim when fields have their own dims (below); each field's
//         entries' rows pooled into one vector of its dim by its combiner
//         (weighted by the entries' values, as TensorFlow's
//         embedding_lookup_sparse): sum, mean (divided by the sum of the
//         weights) or sqrtn (by the square root of the sum of squares);
//   wide: a [rows, 1] table: one weight per key, the entries' weights
//         (times their values) summed into the logit;
//   fm:   Rendle's pairwise term over the field vectors (model/ctr/
//         interactions.h), added to the logit;
//   cross: DCN-v2's cross layers (model/ctr/cross_network.h) on x0 =
//         [dense features, field vectors]; stacked (the MLP reads their
//         output) or parallel (the MLP reads x0; a last dense layer reads
//         both outputs);
//   dot:  DLRM: a bottom MLP maps the dense features to a dim vector; the
//         pairwise dot products of it and the field vectors, after it, feed
//         the MLP (the "top"). Not with fm or cross;
//   MLP:  dense ReLU layers (optionally batch norm and dropout) down to
//         one logit, on [dense features, field vectors] unless cross or dot
//         say otherwise; with no hidden layers, one linear layer.
//   p = sigmoid(logit), binary log-loss. As a Model it has two classes:
//   Predict gives (1 - p, p) per example.
//
// A key's row id is key mod table_rows, in [0, table_rows), for fixed
// tables (hash buckets, as TensorFlow's categorical_column_with_hash_bucket),
// the key itself for dynamic ones (table_rows == 0). With one embedding dim
// (the usual case) the deep and the wide table have the same rows and the
// same row ids. With per-field dims (field_dims), the fields of each dim
// share one physical deep table, `deep/embedding` for the first field's
// dim and `deep/embedding_dim<D>` for each other dim D: dynamic ones keyed
// by the key, fixed ones holding their fields' key ranges (field_ranges)
// one after the other, so a table's rows are what its fields can reach.
// The wide table keeps one row per key id. Runs on the CPU only (the GPU
// back end leaves the embedding layer on the CPU: soft placement). Not
// thread-safe.
#ifndef PST_MODEL_CTR_CTR_MODEL_H_
#define PST_MODEL_CTR_CTR_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/ctr/cross_network.h"
#include "model/ctr/mlp.h"
#include "model/model.h"

namespace pst {

// How a field's entries' rows become one vector (TensorFlow's combiners).
enum class Combiner { kSum, kMean, kSqrtN };

struct CtrModelConfig {
  int64_t dense_features = 0;  // Batch::feature_dim
  int num_fields = 0;          // Batch::num_fields (> 0)
  int64_t embedding_dim = 8;
  Combiner combiner = Combiner::kSum;
  std::vector<Combiner> field_combiners;  // per field; empty: every field uses `combiner`
  bool wide = true;
  bool fm = false;
  int cross_layers = 0;    // DCN-v2's cross layers; 0: none
  int64_t cross_rank = 0;  // 0: full d x d; r > 0: U V^T of rank r
  bool cross_parallel = false;
  bool dot = false;             // DLRM's dot interaction
  std::vector<int64_t> bottom;  // dot: the bottom MLP's ReLU layers (the last: embedding_dim)
  std::vector<int64_t> hidden = {64, 32};  // ReLU layers before the logit
  bool batchnorm = false;                  // in the MLPs, after each hidden dense layer
  double dropout = 0;                      // in the MLPs, after each hidden ReLU; in [0, 1)
  int64_t table_rows = 0;                  // fixed tables' rows; 0: dynamic
  // Per field, its embedding dim; empty: every field has embedding_dim.
  // fm and dot need one dim for every field.
  std::vector<int64_t> field_dims;
  // Fixed tables with field_dims of several dims: each field's key range
  // (fields of one table share theirs; ranges do not overlap).
  std::vector<KeyRange> field_ranges;
};

class CtrModel : public Model {
 public:
  // InvalidArgument for a config out of range or parts that do not go
  // together (naming them); the Kernels' errors.
  static StatusOr<std::unique_ptr<CtrModel>> Create(const CtrModelConfig& config,
                                                    const KernelsOptions& kernels = {});

  const std::vector<VariableSpec>& variables() const override { return variables_; }
  const std::vector<EmbeddingTableSpec>& tables() const override { return tables_; }
  TableRowIds RowIds(const Batch& batch) const override;
  int64_t input_dim() const override { return config_.dense_features; }
  int64_t num_classes() const override { return 2; }
  const std::string& device() const override { return kernels_->device(); }
  std::vector<std::string> Placement() const override;

  StatusOr<float> ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                   std::vector<Tensor>* grads) override;
  StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params, const Batch& batch) override;
  Status Predict(const std::vector<Tensor>& params, const Batch& batch,
                 std::vector<float>* probabilities) override;
  bool LastTrainingProbabilities(std::vector<float>* out) const override;

  const CtrModelConfig& config() const { return config_; }

  // Its parts, for exporters: each null when the model has none, with
  // where its variables start in variables().
  struct Parts {
    const Mlp* mlp = nullptr;  // DLRM's top
    size_t mlp_vars = 0;
    const Mlp* head = nullptr;  // parallel cross layers: the logit from [cross, MLP]
    size_t head_vars = 0;
    const CrossNetwork* cross = nullptr;
    size_t cross_vars = 0;
    const Mlp* bottom = nullptr;  // DLRM's
    size_t bottom_vars = 0;
  };
  Parts parts() const {
    return {mlp_.get(),   mlp_vars_,   head_.get(),   head_vars_,
            cross_.get(), cross_vars_, bottom_.get(), bottom_vars_};
  }

  // Where field f (in [0, num_fields)) reads its vector, for exporters
  // (DeepRow's mapping): its deep table (an index into tables()) and
  // whether the table holds key ranges (fixed tables of several dims).
  // Then an entry of row id `id` reads row base + ((id -
  // config().field_ranges[f].offset) mod its rows, in [0, rows)), base the
  // first row of the field's range there; else row `id`.
  struct FieldRows {
    int64_t table = 0;
    bool ranged = false;
    int64_t base = 0;
  };
  FieldRows field_rows(int f) const {
    return {field_table_[f], !field_base_.empty(), field_base_.empty() ? 0 : field_base_[f]};
  }

 private:
  CtrModel(const CtrModelConfig& config, std::unique_ptr<Kernels> kernels);
  // Fills tables_ and the field_* members from the config.
  void LayOutTables();
  // Appends a part's variables; returns where they start.
  size_t AddVariables(const std::vector<VariableSpec>& specs);

  // Where each sparse entry's rows sit in RowIds(batch): its deep table's
  // and the wide table's (the same slots with one deep table).
  struct Slots {
    std::vector<int32_t> deep, wide;
  };
  // Fills *ids (RowIds) and *slots.
  void FindRows(const Batch& batch, TableRowIds* ids, Slots* slots) const;
  // An entry of field f with row id `id` (key mod table_rows): its row in
  // the field's deep table.
  int64_t DeepRow(int f, int64_t id) const;
  // InvalidArgument unless params (and the batch) fit the model.
  Status Check(const std::vector<Tensor>& params, const Batch& batch, const TableRowIds& ids) const;
  // Fills fields_ (B x field_width_) and divisor_ from the rows.
  void Pool(const std::vector<Tensor>& params, const Batch& batch, const Slots& slots);
  // Fills logits_ (B) from params; keeps what Backward needs.
  void Forward(const std::vector<Tensor>& params, const Batch& batch, const Slots& slots,
               bool training);
  // From dlogit_: the dense variables' gradients into grads, the field
  // vectors' into field_grads_.
  void Backward(const Batch& batch, float* const* grads);

  const CtrModelConfig config_;
  const std::unique_ptr<Kernels> kernels_;
  std::unique_ptr<Mlp> mlp_;     // the MLP (DLRM's top)
  std::unique_ptr<Mlp> head_;    // parallel DCN-v2: the logit from [cross, MLP]
  std::unique_ptr<Mlp> bottom_;  // DLRM's bottom MLP
  std::unique_ptr<CrossNetwork> cross_;
  size_t mlp_vars_ = 0, head_vars_ = 0, bottom_vars_ = 0, cross_vars_ = 0;
  std::vector<VariableSpec> variables_;
  std::vector<EmbeddingTableSpec> tables_;
  // The deep tables: per field, its dim, its table (an index into tables_),
  // where its vector starts in a row of fields_, and the first row of its
  // key range in its table (fixed tables with several dims).
  std::vector<int64_t> field_dim_, field_table_, field_at_, field_base_;
  int deep_tables_ = 1;
  int wide_table_ = -1;      // in tables_; -1: none
  int64_t field_width_ = 0;  // the fields' dims summed
  int64_t deep_width_ = 0;   // dense features + field_width_
  int64_t vectors_ = 0;      // dot: the vectors whose dot products are taken

  // Scratch, sized for the largest batch so far.
  std::vector<const float*> params_;  // the dense variables' values
  std::vector<float> fields_;         // B x field_width_: the pooled field vectors
  std::vector<float> divisor_;        // B x F: each field's combiner divisor
  std::vector<float> deep_input_;     // B x deep_width_: [dense, fields]
  std::vector<float> top_input_;      // dot: B x (dim + pairs); parallel: [cross, MLP]
  std::vector<float> vectors_in_;     // dot: B x vectors_ x dim
  std::vector<float> logits_, dlogit_;
  std::vector<float> field_grads_, deep_input_grad_, top_input_grad_, vectors_grad_, part_grad_;
};

}  // namespace pst

#endif  // PST_MODEL_CTR_CTR_MODEL_H_

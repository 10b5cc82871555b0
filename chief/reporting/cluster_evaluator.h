// ClusterEvaluator: judges the model the cluster trains. It pulls the
// current variables from the ps, measures the test (and validation) loss
// and accuracy, and says when training diverged: a non-finite test loss, or
// a final one no lower than the untrained model's.
//
// Ownership: owns the model and the job (whose test and validation sets it
// evaluates on); borrows the ps client, which must outlive it. Not movable
// (its evaluators point into it). Thread safety: none; the chief's main
// thread.
#ifndef PST_CHIEF_REPORTING_CLUSTER_EVALUATOR_H_
#define PST_CHIEF_REPORTING_CLUSTER_EVALUATOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chief/reporting/evaluator.h"
#include "common/status.h"
#include "job/job.h"
#include "job/model_file.h"
#include "model/model.h"
#include "ps/ps_client.h"

namespace pst {

class ClusterEvaluator {
 public:
  // `job.data.train` is not used (the chief does not train).
  // `tables`: how the ps create a click model's rows (the untrained model's
  // rows are made the same way here).
  ClusterEvaluator(std::unique_ptr<Model> model, Job job, PsClient* ps,
                   const TableSettings& tables = {});
  ClusterEvaluator(const ClusterEvaluator&) = delete;
  ClusterEvaluator& operator=(const ClusterEvaluator&) = delete;

  // The seeded untrained model's (`params`: its values, global step left
  // out): the bar the final test loss must beat.
  Status EvaluateUntrained(const std::vector<Tensor>& params);
  // Pulls the cluster's current model (kept in params()) and evaluates it;
  // a non-finite test loss at global step `step` is Aborted: the model is
  // ruined. With a validation set, evaluates on it too.
  StatusOr<Evaluation> Evaluate(int64_t step);
  // The cluster's current variables (the global step left out), pulled
  // without evaluating: the incremental export's dense part.
  StatusOr<std::vector<Tensor>> PullVariables();
  // A click model's tables, whole, for model.bin: fixed ones [rows, dim]
  // each, pulled in chunks of rows; dynamic ones [n, dim] each, listed from
  // every shard in chunks, their keys (ascending) and row defaults into
  // *dynamic.
  StatusOr<std::vector<Tensor>> PullWholeTables(DynamicTables* dynamic);
  // The test and validation figures of a model as model.bin holds it (its
  // variables, then each table whole): what predict reports for it.
  struct Figures {
    Evaluation test;
    std::optional<Evaluation> validation;  // none without a validation set
  };
  StatusOr<Figures> EvaluateWritten(const TrainedModel& trained);
  // Finite but no better than where training began: Aborted, it diverged.
  Status CheckLearned(const Evaluation& final_evaluation) const;

  const Job& job() const { return job_; }
  // How the ps create the rows of the model's tables.
  const TableSettings& tables() const { return tables_; }
  const Model& model() const { return *model_; }
  // As of the last Evaluate().
  const std::vector<Tensor>& params() const { return params_; }
  // Of the last Evaluate(); none without a validation set.
  const std::optional<Evaluation>& last_validation() const { return last_validation_; }

 private:
  std::unique_ptr<Model> model_;
  Dataset test_;
  Dataset validation_;  // empty without --validation_examples
  Job job_;             // what model.bin records (its data moved into test_, validation_)
  PsClient* const ps_;
  Evaluator evaluator_;
  Evaluator validation_evaluator_;
  // A click model's rows of a batch: pulled from the ps.
  Status PullRows(const TableRowIds& ids, std::vector<Tensor>* rows);
  // ... or as the ps create them, for the untrained model.
  Status InitialRows(const TableRowIds& ids, std::vector<Tensor>* rows) const;
  // Every row every shard holds of dynamic table `spec`, ascending by key.
  Status ListDynamicTable(const EmbeddingTableSpec& spec, Tensor* keys, Tensor* values);

  const TableSettings tables_;
  std::vector<int> model_variables_;  // every variable but the global step
  std::vector<Tensor> params_;
  Evaluation untrained_;
  std::optional<Evaluation> last_validation_;
};

// Aborted: "training diverged: <what>; try a lower --learning_rate".
Status Diverged(const std::string& what);

}  // namespace pst

#endif  // PST_CHIEF_REPORTING_CLUSTER_EVALUATOR_H_

#include "chief/reporting/cluster_evaluator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "ps/sparse/embedding_table.h"

namespace pst {

ClusterEvaluator::ClusterEvaluator(std::unique_ptr<Model> model, Job job, PsClient* ps,
                                   const TableSettings& tables)
    : model_(std::move(model)),
      test_(std::move(job.data.test)),
      validation_(std::move(job.data.validation)),
      job_(std::move(job)),
      ps_(ps),
      evaluator_(model_.get(), &test_),
      validation_evaluator_(model_.get(), &validation_),
      tables_(tables) {
  // Variable 0 is the global step.
  model_variables_.resize(model_->variables().size());
  for (size_t i = 0; i < model_variables_.size(); ++i) model_variables_[i] = i + 1;
}

Status ClusterEvaluator::PullRows(const TableRowIds& ids, std::vector<Tensor>* rows) {
  std::vector<TableRows> tables(model_->tables().size());
  for (size_t t = 0; t < tables.size(); ++t) {
    tables[t].table = static_cast<int>(t);
    tables[t].ids = ids[t];
  }
  std::vector<Tensor> no_variables;
  PST_RETURN_IF_ERROR(ps_->Pull({}, &no_variables, &tables));
  rows->clear();
  for (TableRows& t : tables) rows->push_back(std::move(t.rows));
  return Status::OK();
}

StatusOr<std::vector<Tensor>> ClusterEvaluator::PullWholeTables() {
  constexpr int64_t kChunk = int64_t{1} << 16;
  const std::vector<EmbeddingTableSpec>& specs = model_->tables();
  std::vector<Tensor> whole;
  int64_t most_rows = 0;
  for (const EmbeddingTableSpec& spec : specs) {
    whole.push_back(Tensor::Uninitialized(DType::kFloat32, {spec.rows, spec.dim}));
    most_rows = std::max(most_rows, spec.rows);
  }
  TableRowIds ids(specs.size());
  std::vector<Tensor> rows;
  for (int64_t begin = 0; begin < most_rows; begin += kChunk) {
    for (size_t t = 0; t < specs.size(); ++t) {  // this chunk of every table that reaches it
      ids[t].resize(std::clamp<int64_t>(specs[t].rows - begin, 0, kChunk));
      std::iota(ids[t].begin(), ids[t].end(), begin);
    }
    PST_RETURN_IF_ERROR(PullRows(ids, &rows));
    for (size_t t = 0; t < rows.size(); ++t) {
      std::copy(rows[t].f32(), rows[t].f32() + rows[t].num_elements(),
                whole[t].f32() + begin * specs[t].dim);
    }
  }
  return whole;
}

Status ClusterEvaluator::InitialRows(const TableRowIds& ids, std::vector<Tensor>* rows) const {
  rows->clear();
  for (size_t k = 0; k < model_->tables().size(); ++k) {
    const EmbeddingTableSpec& spec = model_->tables()[k];
    const int64_t n = static_cast<int64_t>(ids[k].size());
    // A key not admitted yet reads as zeros on the ps.
    Tensor t(DType::kFloat32, {n, spec.dim});
    if (spec.rows > 0 || tables_.min_count <= 1) {
      for (int64_t i = 0; i < n; ++i) {
        InitialRow(tables_.seed, spec.name, ids[k][i], tables_.init_scale, spec.dim,
                   t.f32() + i * spec.dim);
      }
    }
    rows->push_back(std::move(t));
  }
  return Status::OK();
}

Status ClusterEvaluator::EvaluateUntrained(const std::vector<Tensor>& params) {
  PST_ASSIGN_OR_RETURN(untrained_, evaluator_.Evaluate(params, [this](const TableRowIds& ids,
                                                                      std::vector<Tensor>* rows) {
    return InitialRows(ids, rows);
  }));
  return Status::OK();
}

StatusOr<std::vector<Tensor>> ClusterEvaluator::PullVariables() {
  std::vector<Tensor> values;
  PST_RETURN_IF_ERROR(ps_->Pull(model_variables_, &values));
  return values;
}

StatusOr<Evaluation> ClusterEvaluator::Evaluate(int64_t step) {
  PST_RETURN_IF_ERROR(ps_->Pull(model_variables_, &params_));
  const RowFetcher pull_rows = [this](const TableRowIds& ids, std::vector<Tensor>* rows) {
    return PullRows(ids, rows);
  };
  PST_ASSIGN_OR_RETURN(Evaluation e, evaluator_.Evaluate(params_, pull_rows));
  if (!std::isfinite(e.loss)) {
    return Diverged("the test loss is " + std::to_string(e.loss) + " at global step " +
                    std::to_string(step));
  }
  if (validation_.size > 0) {
    PST_ASSIGN_OR_RETURN(last_validation_, validation_evaluator_.Evaluate(params_, pull_rows));
  }
  return e;
}

StatusOr<ClusterEvaluator::Figures> ClusterEvaluator::EvaluateWritten(
    const std::vector<Tensor>& params) {
  const size_t variables = model_->variables().size();
  if (params.size() != variables + model_->tables().size()) {
    return InvalidArgument(std::to_string(params.size()) + " parameter tensors for " +
                           std::to_string(variables) + " variables and " +
                           std::to_string(model_->tables().size()) + " tables");
  }
  const std::vector<Tensor> dense(params.begin(), params.begin() + variables);
  const RowFetcher gather = [&](const TableRowIds& ids, std::vector<Tensor>* rows) {
    rows->clear();
    for (size_t t = 0; t < model_->tables().size(); ++t) {
      const Tensor& whole = params[variables + t];
      const int64_t dim = model_->tables()[t].dim;
      Tensor out(DType::kFloat32, {static_cast<int64_t>(ids[t].size()), dim});
      for (size_t i = 0; i < ids[t].size(); ++i) {
        const int64_t id = ids[t][i];
        if (id < 0 || id >= whole.shape()[0]) {
          return InvalidArgument("row " + std::to_string(id) + " is outside table '" +
                                 model_->tables()[t].name + "'");
        }
        std::copy(whole.f32() + id * dim, whole.f32() + (id + 1) * dim, out.f32() + i * dim);
      }
      rows->push_back(std::move(out));
    }
    return Status::OK();
  };
  Figures figures;
  PST_ASSIGN_OR_RETURN(figures.test, evaluator_.Evaluate(dense, gather));
  if (validation_.size > 0) {
    PST_ASSIGN_OR_RETURN(figures.validation, validation_evaluator_.Evaluate(dense, gather));
  }
  return figures;
}

Status ClusterEvaluator::CheckLearned(const Evaluation& final_evaluation) const {
  if (final_evaluation.loss >= untrained_.loss) {
    return Diverged("the test loss at the end, " + std::to_string(final_evaluation.loss) +
                    ", is no lower than the untrained model's, " + std::to_string(untrained_.loss));
  }
  return Status::OK();
}

Status Diverged(const std::string& what) {
  return Aborted("training diverged: " + what + "; try a lower --learning_rate");
}

}  // namespace pst

#include "chief/reporting/cluster_evaluator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "job/trained_rows.h"
#include "ps/shard_admin.h"
#include "ps/sparse/embedding_table.h"

namespace pst {
namespace {

// Rows a pull or listing of a whole table asks each shard for at a time.
constexpr int64_t kWholeTableChunk = int64_t{1} << 16;

}  // namespace

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

Status ClusterEvaluator::ListDynamicTable(const EmbeddingTableSpec& spec, Tensor* keys,
                                          Tensor* values) {
  ShardAdmin admin(ps_);
  std::vector<int64_t> listed_keys;
  std::vector<float> listed_values;
  for (int shard = 0; shard < admin.num_shards(); ++shard) {
    for (int64_t cursor = 0; cursor >= 0;) {
      PST_ASSIGN_OR_RETURN(ListedRows part,
                           admin.ListTableRows(shard, spec.name, cursor, kWholeTableChunk));
      if (part.rows.num_elements() != part.ids.num_elements() * spec.dim) {
        return Internal("ps:" + std::to_string(shard) + " listed rows of table '" + spec.name +
                        "' of another dim");
      }
      listed_keys.insert(listed_keys.end(), part.ids.i64(),
                         part.ids.i64() + part.ids.num_elements());
      listed_values.insert(listed_values.end(), part.rows.f32(),
                           part.rows.f32() + part.rows.num_elements());
      cursor = part.next;
    }
  }
  // Ascending by key; a key listed twice (evicted and created again while
  // it was listed) keeps its later listing.
  std::vector<int64_t> order(listed_keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return listed_keys[a] < listed_keys[b]; });
  std::vector<int64_t> kept;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + 1 < order.size() && listed_keys[order[i + 1]] == listed_keys[order[i]]) continue;
    kept.push_back(order[i]);
  }
  const int64_t n = static_cast<int64_t>(kept.size());
  *keys = Tensor::Uninitialized(DType::kInt64, {n});
  *values = Tensor::Uninitialized(DType::kFloat32, {n, spec.dim});
  for (int64_t i = 0; i < n; ++i) {
    keys->i64()[i] = listed_keys[kept[i]];
    std::copy(listed_values.begin() + kept[i] * spec.dim,
              listed_values.begin() + (kept[i] + 1) * spec.dim, values->f32() + i * spec.dim);
  }
  return Status::OK();
}

StatusOr<std::vector<Tensor>> ClusterEvaluator::PullWholeTables(DynamicTables* dynamic) {
  const std::vector<EmbeddingTableSpec>& specs = model_->tables();
  if (job_.table_rows == 0) {
    *dynamic = DynamicTables{{}, tables_.min_count, tables_.seed, tables_.init_scale};
    std::vector<Tensor> whole(specs.size());
    dynamic->keys.resize(specs.size());
    for (size_t t = 0; t < specs.size(); ++t) {
      PST_RETURN_IF_ERROR(ListDynamicTable(specs[t], &dynamic->keys[t], &whole[t]));
    }
    return whole;
  }
  constexpr int64_t kChunk = kWholeTableChunk;
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

StatusOr<ClusterEvaluator::Figures> ClusterEvaluator::EvaluateWritten(const TrainedModel& trained) {
  const size_t variables = model_->variables().size();
  if (trained.params.size() != variables + model_->tables().size()) {
    return InvalidArgument(std::to_string(trained.params.size()) + " parameter tensors for " +
                           std::to_string(variables) + " variables and " +
                           std::to_string(model_->tables().size()) + " tables");
  }
  const std::vector<Tensor> dense(trained.params.begin(), trained.params.begin() + variables);
  const RowFetcher gather = [&](const TableRowIds& ids, std::vector<Tensor>* rows) {
    return GatherTrainedRows(trained, *model_, ids, rows);
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

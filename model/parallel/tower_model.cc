#include "model/parallel/tower_model.h"

#include <glog/logging.h>

#include <Eigen/Core>
#include <string>
#include <utility>

#include "model/validation.h"

namespace pst {
namespace {

std::string JoinDevices(const std::vector<std::unique_ptr<Model>>& towers) {
  CHECK(!towers.empty()) << "a tower model needs a tower";
  std::string devices;
  for (const std::unique_ptr<Model>& tower : towers) {
    devices += (devices.empty() ? "" : ",") + tower->device();
  }
  return devices;
}

}  // namespace

TowerModel::TowerModel(std::vector<std::unique_ptr<Model>> towers)
    : towers_(std::move(towers)),
      device_(JoinDevices(towers_)),
      slice_begin_(towers_.size() + 1),
      slices_(towers_.size()),
      tower_grads_(towers_.size()),
      losses_(towers_.size()),
      evals_(towers_.size()),
      statuses_(towers_.size()),
      team_(static_cast<int>(towers_.size())) {
  const Model& first = *towers_.front();
  for (const std::unique_ptr<Model>& tower : towers_) {
    CHECK_EQ(tower->input_dim(), first.input_dim());
    CHECK_EQ(tower->num_classes(), first.num_classes());
    CHECK_EQ(tower->variables().size(), first.variables().size());
    for (size_t v = 0; v < first.variables().size(); ++v) {
      const VariableSpec& a = tower->variables()[v];
      const VariableSpec& b = first.variables()[v];
      CHECK(a.name == b.name && a.dtype == b.dtype && a.shape == b.shape)
          << "towers differ at variable " << v << ": " << a.name << " vs " << b.name;
    }
  }
}

std::vector<std::string> TowerModel::Placement() const {
  std::vector<std::string> lines;
  for (int i = 0; i < num_towers(); ++i) {
    for (const std::string& line : towers_[i]->Placement()) {
      lines.push_back("tower " + std::to_string(i) + ": " + line);
    }
  }
  return lines;
}

void TowerModel::SplitOffsets(int64_t batch_size) {
  const int64_t base = batch_size / num_towers();
  const int64_t extra = batch_size % num_towers();
  slice_begin_[0] = 0;
  for (int i = 0; i < num_towers(); ++i) {
    slice_begin_[i + 1] = slice_begin_[i] + base + (i < extra ? 1 : 0);
  }
}

void TowerModel::CopySlice(const Batch& batch, int i) {
  Batch& slice = slices_[i];
  slice.size = SliceSize(i);
  slice.feature_dim = batch.feature_dim;
  const auto features = batch.features.begin() + slice_begin_[i] * batch.feature_dim;
  slice.features.assign(features, features + slice.size * batch.feature_dim);
  if (batch.labels.empty()) {  // Predict: no labels
    slice.labels.clear();
    return;
  }
  const auto labels = batch.labels.begin() + slice_begin_[i];
  slice.labels.assign(labels, labels + slice.size);
}

Status TowerModel::FirstError() const {
  for (int i = 0; i < num_towers(); ++i) {
    if (!statuses_[i].ok()) {
      return Status(statuses_[i].code(),
                    "tower " + std::to_string(i) + ": " + statuses_[i].message());
    }
  }
  return Status::OK();
}

StatusOr<float> TowerModel::ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                             std::vector<Tensor>* grads) {
  CHECK(grads != nullptr);
  // Checked here too (each tower checks its slice again) so that a bad
  // batch gets the same error as from one model, with example indices
  // counted in the whole batch.
  PST_RETURN_IF_ERROR(ValidateParams(params, variables()));
  PST_RETURN_IF_ERROR(ValidateBatch(batch, input_dim(), num_classes()));
  PST_RETURN_IF_ERROR(PrepareGrads(variables(), grads));
  SplitOffsets(batch.size);
  team_.Run([&](int i) {
    statuses_[i] = Status::OK();
    losses_[i] = 0;
    if (SliceSize(i) == 0) return;
    CopySlice(batch, i);
    StatusOr<float> loss = towers_[i]->ComputeGradients(params, slices_[i], &tower_grads_[i]);
    if (loss.ok()) {
      losses_[i] = *loss;
    } else {
      statuses_[i] = loss.status();
    }
  });
  PST_RETURN_IF_ERROR(FirstError());
  CombineGradients(batch.size, grads);
  double loss = 0;
  for (int i = 0; i < num_towers(); ++i) {
    loss += static_cast<double>(losses_[i]) * SliceSize(i) / batch.size;
  }
  return static_cast<float>(loss);
}

void TowerModel::CombineGradients(int64_t batch_size, std::vector<Tensor>* grads) {
  using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
  using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
  team_.Run([&](int t) {
    for (size_t v = 0; v < grads->size(); ++v) {
      // Thread t's share of variable v: elements [begin, end).
      const int64_t n = (*grads)[v].num_elements();
      const int64_t begin = n * t / team_.size();
      const int64_t end = n * (t + 1) / team_.size();
      if (begin == end) continue;
      ArrayMap out((*grads)[v].f32() + begin, end - begin);
      bool first = true;
      for (int i = 0; i < num_towers(); ++i) {
        if (SliceSize(i) == 0) continue;
        const float weight =
            static_cast<float>(static_cast<double>(SliceSize(i)) / static_cast<double>(batch_size));
        ConstArrayMap g(tower_grads_[i][v].f32() + begin, end - begin);
        if (first) {
          out = weight * g;
          first = false;
        } else {
          out += weight * g;
        }
      }
    }
  });
}

StatusOr<Model::EvalResult> TowerModel::Evaluate(const std::vector<Tensor>& params,
                                                 const Batch& batch) {
  PST_RETURN_IF_ERROR(ValidateParams(params, variables()));
  PST_RETURN_IF_ERROR(ValidateBatch(batch, input_dim(), num_classes()));
  SplitOffsets(batch.size);
  team_.Run([&](int i) {
    statuses_[i] = Status::OK();
    evals_[i] = EvalResult();
    if (SliceSize(i) == 0) return;
    CopySlice(batch, i);
    StatusOr<EvalResult> eval = towers_[i]->Evaluate(params, slices_[i]);
    if (eval.ok()) {
      evals_[i] = *eval;
    } else {
      statuses_[i] = eval.status();
    }
  });
  PST_RETURN_IF_ERROR(FirstError());
  EvalResult total;
  for (const EvalResult& eval : evals_) {
    total.loss_sum += eval.loss_sum;
    total.correct += eval.correct;
    total.count += eval.count;
  }
  return total;
}

Status TowerModel::Predict(const std::vector<Tensor>& params, const Batch& batch,
                           std::vector<float>* probabilities) {
  PST_RETURN_IF_ERROR(ValidateParams(params, variables()));
  SplitOffsets(batch.size);
  std::vector<std::vector<float>> parts(towers_.size());
  team_.Run([&](int i) {
    statuses_[i] = Status::OK();
    if (SliceSize(i) == 0) return;
    CopySlice(batch, i);
    statuses_[i] = towers_[i]->Predict(params, slices_[i], &parts[i]);
  });
  PST_RETURN_IF_ERROR(FirstError());
  probabilities->clear();
  for (const std::vector<float>& part : parts) {
    probabilities->insert(probabilities->end(), part.begin(), part.end());
  }
  return Status::OK();
}

}  // namespace pst

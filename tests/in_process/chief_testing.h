// Test helpers for the chief's in-process tests: a small csv problem and a
// worker that trains one step when the test says (no thread, no chief link).
#ifndef PST_TESTS_IN_PROCESS_CHIEF_TESTING_H_
#define PST_TESTS_IN_PROCESS_CHIEF_TESTING_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "job/job.h"
#include "model/model.h"
#include "ps/ps_client.h"
#include "transport/transport.h"

namespace pst {

// `rows` rows of 4 features, 3 classes around centres of their own.
inline std::string WriteCsv(const std::string& path, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  std::ofstream out(path);
  for (int i = 0; i < rows; ++i) {
    const int label = i % 3;
    out << label;
    for (int j = 0; j < 4; ++j) out << "," << (j == label ? 2.0f : 0.0f) + noise(rng);
    out << "\n";
  }
  return path;
}

// A worker that trains one step at a time on the whole training set, as
// the test says.
class StepByStepWorker {
 public:
  StepByStepWorker(Transport& transport, const ClusterSpec& cluster, const Placement& placement,
                   const Job& job, uint64_t cluster_id)
      : model_(MakeJobModel(job).value()),
        train_(job.data.train),
        variables_(model_->variables().size()) {
    ClientIdentity identity;
    identity.role = wire::Role::Worker;
    identity.cluster_id = cluster_id;
    identity.rpc_timeout_ms = 2000;
    ps_ = std::make_unique<PsClient>(transport, cluster, placement, identity);
    std::iota(variables_.begin(), variables_.end(), 1);  // 0 is the global step
  }

  // One step unless the global step reached `train_steps`; a ps that lost
  // its variables refuses it until the chief initializes them again.
  void StepUntil(int64_t train_steps) {
    StatusOr<int64_t> step = ps_->GlobalStep();
    if (!step.ok() || *step >= train_steps) return;
    std::vector<Tensor> params, grads;
    if (!ps_->Pull(variables_, &params).ok()) return;
    const Batch all{train_.size, train_.feature_dim, train_.features, train_.labels};
    ASSERT_TRUE(model_->ComputeGradients(params, all, &grads).ok());
    if (ps_->Push(variables_, grads, /*increment_global_step=*/true).ok()) ++pushes_;
  }
  int64_t global_step() { return ps_->GlobalStep().value(); }
  int pushes() const { return pushes_; }
  uint64_t placement_hash() const { return ps_->placement().Hash(); }

 private:
  std::unique_ptr<Model> model_;
  const Dataset train_;
  std::vector<int> variables_;
  std::unique_ptr<PsClient> ps_;
  int pushes_ = 0;
};

}  // namespace pst

#endif  // PST_TESTS_IN_PROCESS_CHIEF_TESTING_H_

// TowerModel: in-graph replication ("towers", as TensorFlow named its
// per-GPU copies of a model). One model per device, each with
// its own Kernels (several may share a device), computing one step
// together: the batch is split into contiguous slices of sizes as equal as
// possible (the first batch % n towers get one example more; a tower
// gets none when the batch has fewer examples than there are towers), the
// towers run concurrently on a ThreadTeam, and their results combine into
// the full batch's: the loss and the gradients are the slice-size-weighted
// means of the towers' (each a mean over its slice), and Evaluate sums the
// towers' loss_sum, correct and count.
//
// Owns its towers and its threads. Not thread-safe, like every Model.
#ifndef PST_MODEL_PARALLEL_TOWER_MODEL_H_
#define PST_MODEL_PARALLEL_TOWER_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/parallel/thread_team.h"

namespace pst {

class TowerModel : public Model {
 public:
  // At least one tower; all declare the same variables, input_dim and
  // num_classes (CHECKed).
  explicit TowerModel(std::vector<std::unique_ptr<Model>> towers);

  const std::vector<VariableSpec>& variables() const override {
    return towers_.front()->variables();
  }
  int64_t input_dim() const override { return towers_.front()->input_dim(); }
  int64_t num_classes() const override { return towers_.front()->num_classes(); }
  const std::string& device() const override { return device_; }
  std::vector<std::string> Placement() const override;

  StatusOr<float> ComputeGradients(const std::vector<Tensor>& params, const Batch& batch,
                                   std::vector<Tensor>* grads) override;
  StatusOr<EvalResult> Evaluate(const std::vector<Tensor>& params, const Batch& batch) override;
  Status Predict(const std::vector<Tensor>& params, const Batch& batch,
                 std::vector<float>* probabilities) override;

 private:
  int num_towers() const { return static_cast<int>(towers_.size()); }
  // Sets slice_begin_ for a batch of `batch_size` examples.
  void SplitOffsets(int64_t batch_size);
  // Copies tower i's slice of `batch` into slices_[i], whose vectors keep
  // their capacity from step to step. Runs on the tower's thread.
  void CopySlice(const Batch& batch, int i);
  int64_t SliceSize(int i) const { return slice_begin_[i + 1] - slice_begin_[i]; }
  // OK, or the first failed tower's error, naming the tower.
  Status FirstError() const;
  // grads[v] = sum over towers of (slice size / batch size) *
  // tower_grads_[i][v], computed by the team, each thread on its share of
  // every variable's elements.
  void CombineGradients(int64_t batch_size, std::vector<Tensor>* grads);

  const std::vector<std::unique_ptr<Model>> towers_;
  const std::string device_;

  // Per tower, reused from step to step: the first example of its slice
  // (slice_begin_[n] is the batch size), the slice, its gradients and the
  // status of its part of the current step.
  std::vector<int64_t> slice_begin_;
  std::vector<Batch> slices_;
  std::vector<std::vector<Tensor>> tower_grads_;
  std::vector<float> losses_;
  std::vector<EvalResult> evals_;
  std::vector<Status> statuses_;

  // Declared last: its threads stop before the state they use is destroyed.
  ThreadTeam team_;
};

}  // namespace pst

#endif  // PST_MODEL_PARALLEL_TOWER_MODEL_H_

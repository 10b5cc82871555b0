#include "scheduler/cluster_evaluator.h"

#include <cmath>
#include <utility>

namespace pst {

ClusterEvaluator::ClusterEvaluator(std::unique_ptr<Model> model, Job job, PsClient* ps)
    : model_(std::move(model)),
      test_(std::move(job.data.test)),
      validation_(std::move(job.data.validation)),
      job_(std::move(job)),
      ps_(ps),
      evaluator_(model_.get(), &test_),
      validation_evaluator_(model_.get(), &validation_) {
  // Variable 0 is the global step.
  model_variables_.resize(model_->variables().size());
  for (size_t i = 0; i < model_variables_.size(); ++i) model_variables_[i] = i + 1;
}

Status ClusterEvaluator::EvaluateUntrained(const std::vector<Tensor>& params) {
  PST_ASSIGN_OR_RETURN(untrained_, evaluator_.Evaluate(params));
  return Status::OK();
}

StatusOr<Evaluation> ClusterEvaluator::Evaluate(int64_t step) {
  PST_RETURN_IF_ERROR(ps_->Pull(model_variables_, &params_));
  PST_ASSIGN_OR_RETURN(Evaluation e, evaluator_.Evaluate(params_));
  if (!std::isfinite(e.loss)) {
    return Diverged("the test loss is " + std::to_string(e.loss) + " at global step " +
                    std::to_string(step));
  }
  if (validation_.size > 0) {
    PST_ASSIGN_OR_RETURN(last_validation_, validation_evaluator_.Evaluate(params_));
  }
  return e;
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

#include "scheduler/evaluator.h"

#include <algorithm>

namespace pst {

Evaluator::Evaluator(Model* model, const Dataset* test, int64_t batch_size)
    : model_(model), test_(test), batch_size_(batch_size) {}

StatusOr<Evaluation> Evaluator::Evaluate(const std::vector<Tensor>& params) {
  const int64_t d = test_->feature_dim;
  double loss_sum = 0;
  int64_t correct = 0, count = 0;
  for (int64_t begin = 0; begin < test_->size; begin += batch_size_) {
    const int64_t n = std::min(batch_size_, test_->size - begin);
    batch_.size = n;
    batch_.feature_dim = d;
    batch_.features.assign(test_->features.begin() + begin * d,
                           test_->features.begin() + (begin + n) * d);
    batch_.labels.assign(test_->labels.begin() + begin, test_->labels.begin() + begin + n);
    PST_ASSIGN_OR_RETURN(Model::EvalResult r, model_->Evaluate(params, batch_));
    loss_sum += r.loss_sum;
    correct += r.correct;
    count += r.count;
  }
  if (count == 0) return FailedPrecondition("empty test set");
  return Evaluation{loss_sum / count, static_cast<double>(correct) / count};
}

}  // namespace pst

#include "chief/reporting/evaluator.h"

#include <algorithm>

#include "data/example_range.h"
#include "model/ctr/binary_metrics.h"

namespace pst {

Evaluator::Evaluator(Model* model, const Dataset* test, int64_t batch_size)
    : model_(model), test_(test), batch_size_(batch_size) {}

StatusOr<Evaluation> Evaluator::Evaluate(const std::vector<Tensor>& params,
                                         const RowFetcher& rows) {
  const bool click = !model_->tables().empty();
  if (click && !rows) return InvalidArgument("a model with embedding tables needs their rows");
  double loss_sum = 0;
  int64_t correct = 0, count = 0;
  std::vector<float> clicks, probabilities;  // click models: P(click) of every example
  std::vector<Tensor> with_rows;
  for (int64_t begin = 0; begin < test_->size; begin += batch_size_) {
    const int64_t n = std::min(batch_size_, test_->size - begin);
    CopyExamples(*test_, begin, n, &batch_);
    if (click) {
      with_rows = params;
      std::vector<Tensor> fetched;
      PST_RETURN_IF_ERROR(rows(model_->RowIds(batch_), &fetched));
      with_rows.insert(with_rows.end(), fetched.begin(), fetched.end());
      PST_RETURN_IF_ERROR(model_->Predict(with_rows, batch_, &probabilities));
      // One forward pass: accuracy and log-loss come from the probabilities.
      for (int64_t i = 0; i < n; ++i) {
        const float p = probabilities[2 * i + 1];
        clicks.push_back(p);
        correct += (p >= 0.5f) == (batch_.labels[i] == 1);
      }
      count += n;
      continue;
    }
    PST_ASSIGN_OR_RETURN(Model::EvalResult r, model_->Evaluate(params, batch_));
    loss_sum += r.loss_sum;
    correct += r.correct;
    count += r.count;
  }
  if (count == 0) return FailedPrecondition("empty test set");
  Evaluation e{loss_sum / count, static_cast<double>(correct) / count};
  if (click) {
    const BinaryMetrics m = ComputeBinaryMetrics(clicks, test_->labels);
    e.loss = m.log_loss;
    e.auc = m.auc;
    e.log_loss = m.log_loss;
    e.ctr = m.ctr;
  }
  return e;
}

}  // namespace pst

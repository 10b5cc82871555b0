// Evaluator: test-set loss and accuracy of a set of parameters.
#ifndef PST_SCHEDULER_EVALUATOR_H_
#define PST_SCHEDULER_EVALUATOR_H_

#include "data/dataset.h"
#include "model/model.h"

namespace pst {

struct Evaluation {
  double loss = 0;      // mean cross-entropy
  double accuracy = 0;  // fraction of correct argmax predictions
};

class Evaluator {
 public:
  // `model` and `test` are borrowed and must outlive the evaluator.
  Evaluator(Model* model, const Dataset* test, int64_t batch_size = 1000);
  StatusOr<Evaluation> Evaluate(const std::vector<Tensor>& params);

 private:
  Model* model_;
  const Dataset* test_;
  int64_t batch_size_;
  Batch batch_;  // reused across calls
};

}  // namespace pst

#endif  // PST_SCHEDULER_EVALUATOR_H_

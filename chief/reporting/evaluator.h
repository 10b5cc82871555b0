// Evaluator: test-set loss and accuracy of a set of parameters; for a click
// model (one with embedding tables) also the exact AUC and log-loss, with
// the rows of each batch fetched as it goes.
#ifndef PST_CHIEF_REPORTING_EVALUATOR_H_
#define PST_CHIEF_REPORTING_EVALUATOR_H_

#include <cmath>
#include <functional>
#include <vector>

#include "data/dataset.h"
#include "model/model.h"

namespace pst {

struct Evaluation {
  double loss = 0;      // mean cross-entropy
  double accuracy = 0;  // fraction of correct argmax predictions
  // Click models: exact AUC and log-loss (p clipped to [1e-7, 1 - 1e-7])
  // and the share of positive labels; NaN for other models.
  double auc = NAN;
  double log_loss = NAN;
  double ctr = NAN;
  bool binary() const { return !std::isnan(log_loss); }
};

// Fills rows[t] ([ids[t], dim] float32) for every table t of the model.
using RowFetcher = std::function<Status(const TableRowIds& ids, std::vector<Tensor>* rows)>;

class Evaluator {
 public:
  // `model` and `test` are borrowed and must outlive the evaluator.
  Evaluator(Model* model, const Dataset* test, int64_t batch_size = 1000);
  // `rows` must be given for a model with tables.
  StatusOr<Evaluation> Evaluate(const std::vector<Tensor>& params,
                                const RowFetcher& rows = nullptr);

 private:
  Model* model_;
  const Dataset* test_;
  int64_t batch_size_;
  Batch batch_;  // reused across calls
};

}  // namespace pst

#endif  // PST_CHIEF_REPORTING_EVALUATOR_H_

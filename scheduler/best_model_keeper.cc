#include "scheduler/best_model_keeper.h"

#include <glog/logging.h>

#include <sstream>
#include <utility>

namespace pst {

BestModelKeeper::BestModelKeeper(BestModelOptions options) : options_(std::move(options)) {
  CHECK_GE(options_.patience, 0);
}

bool BestModelKeeper::Better(double score) const {
  if (!best_step_) return score == score;  // anything but NaN
  return options_.higher_is_better ? score > best_score_ : score < best_score_;
}

EvaluationVerdict BestModelKeeper::Observe(int64_t step, double score) {
  EvaluationVerdict verdict;
  if (Better(score)) {
    best_step_ = step;
    best_score_ = score;
    without_improvement_ = 0;
    verdict.new_best = true;
    return verdict;
  }
  ++without_improvement_;
  if (options_.patience == 0 || without_improvement_ < options_.patience) return verdict;
  verdict.stop = true;
  std::ostringstream message;
  message << "early stopping at step " << step << ": no improvement in " << without_improvement_
          << " evaluations";
  if (best_step_) {
    message << " since step " << *best_step_ << " (best " << options_.metric << " " << best_score_
            << ")";
  }
  verdict.stop_message = message.str();
  return verdict;
}

void BestModelKeeper::Restore(int64_t step, double score) {
  best_step_ = step;
  best_score_ = score;
  without_improvement_ = 0;
}

}  // namespace pst

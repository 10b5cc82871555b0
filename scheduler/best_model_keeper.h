// BestModelKeeper: which evaluation produced the best model so far, and
// when to stop early, like Keras' ModelCheckpoint(save_best_only) with
// EarlyStopping: fed each evaluation in turn, it says whether the model just
// evaluated is a new best (strictly better than every earlier one) and
// whether `patience` evaluations in a row have gone by without a new best
// (0: never stop). A NaN score is never a best and counts as no improvement.
//
// Use (when wired): the chief feeds Observe() after each evaluation with the
// metric the job names (accuracy, higher is better; loss or log-loss, lower
// is better); on new_best it writes best_model.bin from the parameters it
// just evaluated (and records best_step/best_score beside it, so that a
// restored chief can rebuild the keeper with Restore()); on stop it logs
// stop_message, saves a final checkpoint and ends the run as at
// --train_steps.
//
// Thread safety: none.
#ifndef PST_SCHEDULER_BEST_MODEL_KEEPER_H_
#define PST_SCHEDULER_BEST_MODEL_KEEPER_H_

#include <cstdint>
#include <optional>
#include <string>

namespace pst {

struct BestModelOptions {
  std::string metric = "accuracy";  // its name, for the log
  bool higher_is_better = true;
  int patience = 0;  // >= 0; 0: never stop early
};

struct EvaluationVerdict {
  bool new_best = false;  // write the best model now
  bool stop = false;      // stop training now
  // When stop: "early stopping at step S: no improvement in K evaluations
  // since step B (best accuracy X)".
  std::string stop_message;
};

class BestModelKeeper {
 public:
  explicit BestModelKeeper(BestModelOptions options);

  // The evaluation of the parameters at global step `step`.
  EvaluationVerdict Observe(int64_t step, double score);

  // A restored chief: the best so far was `score` at `step`; the count of
  // evaluations without improvement starts again from zero.
  void Restore(int64_t step, double score);

  // Unset before the first best.
  std::optional<int64_t> best_step() const { return best_step_; }
  double best_score() const { return best_score_; }

 private:
  bool Better(double score) const;

  const BestModelOptions options_;
  std::optional<int64_t> best_step_;
  double best_score_ = 0;
  int without_improvement_ = 0;
};

}  // namespace pst

#endif  // PST_SCHEDULER_BEST_MODEL_KEEPER_H_

// PlateauDecision: when the chief lowers the learning rate of a "plateau"
// schedule (ps/optimizers/lr_schedule.h), like Keras' ReduceLROnPlateau:
// fed each validation loss in turn, it says "lower" once `patience`
// evaluations in a row brought no improvement of at least `min_delta` over
// the best loss so far. After a lowering the count starts again from zero
// and the next `cooldown` evaluations count for nothing (the model needs a
// few evaluations to profit from the lower rate); a new best still resets
// the count then.
//
// A NaN loss is no improvement (the worker's divergence check, not this,
// ends a diverged run).
//
// Use: chief/lr_plateau.h feeds Observe() after each evaluation; on true
// it sends lowerings() (the k of LrSchedule::RateAt) to every ps, and the
// chief records it in its checkpoints. On restore it builds a new
// PlateauDecision from the checkpoint's k: the best loss and the counts
// start afresh, which can only delay the next lowering.
//
// Thread safety: none.
#ifndef PST_SCHEDULER_PLATEAU_DECISION_H_
#define PST_SCHEDULER_PLATEAU_DECISION_H_

#include <limits>

namespace pst {

struct PlateauOptions {
  int patience = 5;      // >= 1
  double min_delta = 0;  // >= 0: an improvement is loss < best - min_delta
  int cooldown = 0;      // >= 0
};

class PlateauDecision {
 public:
  // `lowerings`: how many times the rate was lowered already (a restore).
  explicit PlateauDecision(PlateauOptions options, int lowerings = 0);

  // The next validation loss; true: lower the rate now (lowerings() counts it).
  bool Observe(double validation_loss);

  int lowerings() const { return lowerings_; }

 private:
  PlateauOptions options_;  // not const: a restore assigns a new decision
  int lowerings_;
  double best_ = std::numeric_limits<double>::infinity();
  int without_improvement_ = 0;
  int cooldown_left_ = 0;
};

}  // namespace pst

#endif  // PST_SCHEDULER_PLATEAU_DECISION_H_

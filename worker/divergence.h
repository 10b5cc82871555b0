// Telling a diverged training step apart on a worker: a loss or gradient
// that is NaN or infinite must never be pushed (one such update poisons the
// parameters every worker pulls), and ends the worker with an error that
// says what happened and what to try.
#ifndef PST_WORKER_DIVERGENCE_H_
#define PST_WORKER_DIVERGENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"

namespace pst {

// What in a step is not finite: "loss nan", or, for a finite loss,
// "gradient of <variable> not finite (loss 0.52)"; nullopt when all is
// finite. grads[i] is the gradient of variables[i] (float32).
std::optional<std::string> NonFiniteStep(float loss, const std::vector<Tensor>& grads,
                                         const std::vector<VariableSpec>& variables);
// "gradient of <variable> not finite (loss 0.52)".
std::string GradientNotFinite(const std::string& variable, float loss);

// True when a ps refused a push because it holds non-finite values
// (InvalidArgument naming them non-finite).
bool IsNonFiniteRefusal(const Status& status);

// Aborted: "training diverged: <what> at global step <step> (try a lower
// --learning_rate)".
Status Diverged(const std::string& what, int64_t global_step);

}  // namespace pst

#endif  // PST_WORKER_DIVERGENCE_H_

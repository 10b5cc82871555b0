#include "worker/divergence.h"

#include <cmath>
#include <sstream>

#include "common/non_finite.h"

namespace pst {

std::optional<std::string> NonFiniteStep(float loss, const std::vector<Tensor>& grads,
                                         const std::vector<VariableSpec>& variables) {
  if (!std::isfinite(loss)) {
    // std::to_string would print "-nan" for some NaNs; the sign of a NaN means nothing.
    return std::string("loss ") + (std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf");
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    CHECK(grads[i].dtype() == DType::kFloat32) << variables[i].name;
    const int64_t n = grads[i].num_elements();
    if (FirstNonFinite(grads[i].f32(), n) < n) return GradientNotFinite(variables[i].name, loss);
  }
  return std::nullopt;
}

std::string GradientNotFinite(const std::string& variable, float loss) {
  std::ostringstream what;
  what << "gradient of " << variable << " not finite (loss " << loss << ")";
  return what.str();
}

bool IsNonFiniteRefusal(const Status& status) {
  return status.code() == Code::kInvalidArgument &&
         status.message().find("non-finite") != std::string::npos;
}

Status Diverged(const std::string& what, int64_t global_step) {
  return Aborted("training diverged: " + what + " at global step " + std::to_string(global_step) +
                 " (try a lower --learning_rate)");
}

}  // namespace pst

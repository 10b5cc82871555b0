// Shared by the optimizer implementations and the registry. Not a public
// header: users include ps/optimizers/optimizer.h.
#ifndef PST_PS_OPTIMIZERS_OPTIMIZER_INTERNAL_H_
#define PST_PS_OPTIMIZERS_OPTIMIZER_INTERNAL_H_

#include <Eigen/Core>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "common/status.h"
#include "ps/optimizers/optimizer.h"

namespace pst {
namespace optimizers_internal {

// Unaligned maps: var and grad may point anywhere, e.g. into a network buffer.
using FloatArray = Eigen::Map<Eigen::ArrayXf, Eigen::Unaligned>;
using ConstFloatArray = Eigen::Map<const Eigen::ArrayXf, Eigen::Unaligned>;

// One per implementation file; each validates the fields it reads (the
// registry has already checked name and learning_rate).
StatusOr<std::unique_ptr<Optimizer>> NewSgd(const OptimizerConfig& config);
StatusOr<std::unique_ptr<Optimizer>> NewMomentum(const OptimizerConfig& config);
StatusOr<std::unique_ptr<Optimizer>> NewAdagrad(const OptimizerConfig& config);
StatusOr<std::unique_ptr<Optimizer>> NewAdam(const OptimizerConfig& config);
StatusOr<std::unique_ptr<Optimizer>> NewFtrl(const OptimizerConfig& config);

// InvalidArgument "OptimizerConfig.<field> must be ..., got <value>" unless
// value is finite and > 0, in [0, 1), or finite and >= 0 respectively. NaN
// fails all three.
Status CheckPositive(const char* field, float value);
Status CheckFraction(const char* field, float value);
Status CheckNonNegative(const char* field, float value);

// Slots with these names, each n copies of initial_value.
SlotSet NewSlots(std::initializer_list<std::string_view> names, int64_t n, float initial_value);

// CHECKs that slots is non-null and holds exactly these slot names, each of
// n floats: anything else is a caller bug (wrong variable or optimizer).
void CheckSlots(const SlotSet* slots, std::initializer_list<std::string_view> names, int64_t n);

}  // namespace optimizers_internal
}  // namespace pst

#endif  // PST_PS_OPTIMIZERS_OPTIMIZER_INTERNAL_H_

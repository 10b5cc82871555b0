#include "ps/optimizers/optimizer_internal.h"

#include <cmath>
#include <sstream>
#include <string>

namespace pst {
namespace optimizers_internal {
namespace {

Status OutOfRangeField(const char* field, const char* requirement, float value) {
  // A stream, not std::to_string, so that 1e-09 is not printed as 0.000000.
  std::ostringstream message;
  message << "OptimizerConfig." << field << " must be " << requirement << ", got " << value;
  return InvalidArgument(message.str());
}

}  // namespace

Status CheckPositive(const char* field, float value) {
  if (std::isfinite(value) && value > 0) return Status::OK();
  return OutOfRangeField(field, "finite and > 0", value);
}

Status CheckFraction(const char* field, float value) {
  if (value >= 0 && value < 1) return Status::OK();
  return OutOfRangeField(field, "in [0, 1)", value);
}

Status CheckNonNegative(const char* field, float value) {
  if (std::isfinite(value) && value >= 0) return Status::OK();
  return OutOfRangeField(field, "finite and >= 0", value);
}

SlotSet NewSlots(std::initializer_list<std::string_view> names, int64_t n, float initial_value) {
  CHECK_GE(n, 0);
  SlotSet slots;
  for (std::string_view name : names) {
    slots.names.emplace_back(name);
    slots.values.emplace_back(n, initial_value);
  }
  return slots;
}

void CheckSlots(const SlotSet* slots, std::initializer_list<std::string_view> names, int64_t n) {
  CHECK(slots != nullptr);
  CHECK_GE(n, 0);
  CHECK_EQ(slots->names.size(), names.size());
  CHECK_EQ(slots->values.size(), names.size());
  size_t i = 0;
  for (std::string_view name : names) {
    CHECK_EQ(slots->names[i], name);
    CHECK_EQ(static_cast<int64_t>(slots->values[i].size()), n) << "slot " << name;
    ++i;
  }
}

}  // namespace optimizers_internal
}  // namespace pst

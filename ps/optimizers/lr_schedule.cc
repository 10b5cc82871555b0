#include "ps/optimizers/lr_schedule.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace pst {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct KindName {
  std::string_view name;
  LrDecay kind;
};
constexpr KindName kKinds[] = {{"constant", LrDecay::kConstant},
                               {"step", LrDecay::kStep},
                               {"exponential", LrDecay::kExponential},
                               {"cosine", LrDecay::kCosine},
                               {"plateau", LrDecay::kPlateau}};

template <typename T>
Status OutOfRange(const char* field, const char* requirement, T value) {
  // A stream, not std::to_string, so that 1e-09 is not printed as 0.000000.
  std::ostringstream message;
  message << "LrScheduleOptions." << field << " must be " << requirement << ", got " << value;
  return InvalidArgument(message.str());
}

Status Validate(LrDecay kind, const LrScheduleOptions& o) {
  const float lr = o.learning_rate;
  if (!(std::isfinite(lr) && lr > 0)) return OutOfRange("learning_rate", "finite and > 0", lr);
  if (o.warmup_steps < 0) return OutOfRange("warmup_steps", ">= 0", o.warmup_steps);
  if (!(o.lr_min >= 0 && o.lr_min <= lr)) {
    return OutOfRange("lr_min", "in [0, learning_rate]", o.lr_min);
  }
  const bool reads_steps =
      kind == LrDecay::kStep || kind == LrDecay::kExponential || kind == LrDecay::kCosine;
  if (reads_steps && o.decay_steps <= 0) return OutOfRange("decay_steps", "> 0", o.decay_steps);
  const float r = o.decay_rate;
  if ((kind == LrDecay::kStep || kind == LrDecay::kExponential) && !(std::isfinite(r) && r > 0)) {
    return OutOfRange("decay_rate", "finite and > 0", r);
  }
  if (kind == LrDecay::kPlateau && !(r > 0 && r < 1)) {
    return OutOfRange("decay_rate", "in (0, 1) for plateau", r);
  }
  return Status::OK();
}

}  // namespace

StatusOr<LrSchedule> LrSchedule::Parse(std::string_view kind, const LrScheduleOptions& options) {
  for (const KindName& k : kKinds) {
    if (k.name != kind) continue;
    PST_RETURN_IF_ERROR(Validate(k.kind, options));
    return LrSchedule(k.kind, options);
  }
  std::string valid;
  for (const KindName& k : kKinds) valid += (valid.empty() ? "" : ", ") + std::string(k.name);
  return InvalidArgument("unknown learning-rate schedule '" + std::string(kind) +
                         "' (valid: " + valid + ")");
}

double LrSchedule::Decayed(int64_t step, int lowerings) const {
  const double lr = options_.learning_rate;
  const double r = options_.decay_rate;
  // Read only by the kinds that validated decay_steps > 0.
  const auto periods = [&] { return static_cast<double>(step) / options_.decay_steps; };
  switch (kind_) {
    case LrDecay::kConstant: return lr;
    case LrDecay::kStep: return lr * std::pow(r, std::floor(periods()));
    case LrDecay::kExponential: return lr * std::pow(r, periods());
    case LrDecay::kCosine: {
      const double lr_min = options_.lr_min;
      return lr_min + (lr - lr_min) * 0.5 * (1 + std::cos(kPi * std::min(periods(), 1.0)));
    }
    case LrDecay::kPlateau: return lr * std::pow(r, lowerings);
  }
  LOG(FATAL) << "unknown LrDecay " << static_cast<int>(kind_);
}

float LrSchedule::RateAt(int64_t step, int lowerings) const {
  CHECK_GE(step, 0);
  CHECK_GE(lowerings, 0);
  double rate = std::max<double>(options_.lr_min, Decayed(step, lowerings));
  const int64_t warmup = options_.warmup_steps;
  if (step < warmup) rate *= static_cast<double>(step + 1) / warmup;
  return static_cast<float>(rate);
}

float LrSchedule::Multiplier(int64_t step, int lowerings) const {
  return RateAt(step, lowerings) / options_.learning_rate;
}

}  // namespace pst

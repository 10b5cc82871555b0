#include "worker/step_phases.h"

#include <cstdio>

namespace pst {
namespace {

double Milliseconds(StepPhases::Duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

void StepPhases::EndStep(Duration d) {
  for (int p = 0; p < kNumPhases; ++p) phases_[p] += current_[p];
  current_ = {};
  steps_total_ += d;
  ++steps_;
}

StepPhases StepPhases::Since(const StepPhases& earlier) const {
  StepPhases since;
  for (int p = 0; p < kNumPhases; ++p) since.phases_[p] = phases_[p] - earlier.phases_[p];
  since.steps_total_ = steps_total_ - earlier.steps_total_;
  since.steps_ = steps_ - earlier.steps_;
  return since;
}

double StepPhases::Mean(Phase phase) const {
  return steps_ == 0 ? 0 : Milliseconds(phases_[phase]) / steps_;
}

double StepPhases::MeanStep() const {
  return steps_ == 0 ? 0 : Milliseconds(steps_total_) / steps_;
}

double StepPhases::MeanComputing() const {
  double rest = MeanStep();
  for (int p = 0; p < kNumPhases; ++p) rest -= Mean(static_cast<Phase>(p));
  return rest;
}

std::string StepPhases::Describe() const {
  char line[256];
  std::snprintf(line, sizeof(line),
                "%lld steps, per step %.3f ms: computing %.3f ms, waiting for the "
                "acknowledgement %.3f ms, sending %.3f ms, waiting for the pull %.3f ms",
                static_cast<long long>(steps_), MeanStep(), MeanComputing(), Mean(kAcknowledgement),
                Mean(kSending), Mean(kPull));
  return line;
}

}  // namespace pst

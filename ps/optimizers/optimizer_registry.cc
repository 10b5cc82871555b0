// The factory: maps OptimizerConfig::name to an implementation. Adding an
// optimizer takes one file with its New* function and one row in kRegistry.
#include <string>

#include "ps/optimizers/optimizer.h"
#include "ps/optimizers/optimizer_internal.h"

namespace pst {
namespace {

using Factory = StatusOr<std::unique_ptr<Optimizer>> (*)(const OptimizerConfig& config);

struct Registration {
  const char* name;
  Factory make;
};

constexpr Registration kRegistry[] = {
    {"sgd", optimizers_internal::NewSgd},            // sgd.cc
    {"momentum", optimizers_internal::NewMomentum},  // momentum.cc
    {"adagrad", optimizers_internal::NewAdagrad},    // adagrad.cc
    {"adam", optimizers_internal::NewAdam},          // adam.cc
    {"ftrl", optimizers_internal::NewFtrl},          // ftrl.cc
};

Status UnknownName(const std::string& name) {
  std::string known;
  for (const Registration& r : kRegistry) {
    known += known.empty() ? "" : ", ";
    known += r.name;
  }
  return InvalidArgument("OptimizerConfig.name: unknown optimizer \"" + name +
                         "\" (known: " + known + ")");
}

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& config) {
  for (const Registration& r : kRegistry) {
    if (config.name == r.name) {
      PST_RETURN_IF_ERROR(
          optimizers_internal::CheckPositive("learning_rate", config.learning_rate));
      return r.make(config);
    }
  }
  return UnknownName(config.name);
}

}  // namespace pst

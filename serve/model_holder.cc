#include "serve/model_holder.h"

#include <utility>

namespace pst {

std::shared_ptr<const ServedModel> ModelHolder::Get(std::string* why_none) const {
  MutexLock lock(mu_);
  if (model_ == nullptr && why_none != nullptr) *why_none = why_none_;
  return model_;
}

void ModelHolder::Publish(std::unique_ptr<ServedModel> model) {
  std::shared_ptr<const ServedModel> old;
  {
    MutexLock lock(mu_);
    model->load = ++loads_;
    old = std::move(model_);
    model_ = std::move(model);
  }
  // `old` is freed here, out of the lock, or later by the last request
  // still holding it.
}

void ModelHolder::SetWhyNone(std::string why_none) {
  MutexLock lock(mu_);
  why_none_ = std::move(why_none);
}

int64_t ModelHolder::loads() const {
  MutexLock lock(mu_);
  return loads_;
}

}  // namespace pst

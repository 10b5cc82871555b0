#include "serve/predictor_pool.h"

#include <algorithm>
#include <utility>

namespace pst {

PredictorPool::Lease::Lease(PredictorPool* pool, std::shared_ptr<const ServedModel> served,
                            std::unique_ptr<LoadedModel> loaded)
    : pool_(pool), served_(std::move(served)), loaded_(std::move(loaded)) {}

PredictorPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), served_(std::move(other.served_)), loaded_(std::move(other.loaded_)) {}

PredictorPool::Lease::~Lease() {
  if (loaded_ != nullptr) pool_->Release({std::move(served_), std::move(loaded_)});
}

StatusOr<PredictorPool::Lease> PredictorPool::Acquire(std::shared_ptr<const ServedModel> served) {
  std::vector<Entry> stale;  // freed out of the lock
  {
    MutexLock lock(mu_);
    newest_load_ = std::max(newest_load_, served->load);
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (it->served->load < newest_load_) {
        stale.push_back(std::move(*it));
        it = idle_.erase(it);
      } else if (it->served == served) {
        Entry entry = std::move(*it);
        idle_.erase(it);
        return Lease(this, std::move(entry.served), std::move(entry.loaded));
      } else {
        ++it;
      }
    }
  }
  // Built out of the lock: the other requests need not wait for it.
  PST_ASSIGN_OR_RETURN(std::unique_ptr<LoadedModel> loaded,
                       LoadedModel::Make(served->trained, served->source));
  return Lease(this, std::move(served), std::move(loaded));
}

void PredictorPool::Release(Entry entry) {
  MutexLock lock(mu_);
  if (entry.served->load < newest_load_) return;  // freed on return, as stale
  idle_.push_back(std::move(entry));
}

size_t PredictorPool::idle() const {
  MutexLock lock(mu_);
  return idle_.size();
}

}  // namespace pst

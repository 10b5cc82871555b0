// PredictorPool: LoadedModels (predict/loaded_model.h) for the requests in
// flight. A LoadedModel keeps buffers between calls, so one serves one
// request at a time: a request leases one built from its ServedModel (a
// cheap build: the tensors are shared, not copied), predicts, and gives it
// back for the next request. The pool holds at most as many as requests ran
// at once (the HTTP threads), so each HTTP thread in effect keeps its own.
// A LoadedModel of an older model than one leased since is dropped instead
// of kept, so a swapped-out model's memory goes with its last request.
//
// Thread safety: Acquire from any thread; a Lease is used by one thread.
#ifndef PST_SERVE_PREDICTOR_POOL_H_
#define PST_SERVE_PREDICTOR_POOL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "predict/loaded_model.h"
#include "serve/served_model.h"

namespace pst {

class PredictorPool {
 public:
  // A LoadedModel of one ServedModel, for one request; back to the pool
  // when destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    LoadedModel& model() { return *loaded_; }

   private:
    friend class PredictorPool;
    Lease(PredictorPool* pool, std::shared_ptr<const ServedModel> served,
          std::unique_ptr<LoadedModel> loaded);

    PredictorPool* pool_;
    std::shared_ptr<const ServedModel> served_;
    std::unique_ptr<LoadedModel> loaded_;  // null once moved from
  };

  PredictorPool() = default;
  PredictorPool(const PredictorPool&) = delete;
  PredictorPool& operator=(const PredictorPool&) = delete;

  // A LoadedModel of `served`: a kept one, or a new one. Errors:
  // LoadedModel::Make's.
  StatusOr<Lease> Acquire(std::shared_ptr<const ServedModel> served) EXCLUDES(mu_);

  // LoadedModels kept for the next requests.
  size_t idle() const EXCLUDES(mu_);

 private:
  struct Entry {
    std::shared_ptr<const ServedModel> served;
    std::unique_ptr<LoadedModel> loaded;
  };
  void Release(Entry entry) EXCLUDES(mu_);

  mutable Mutex mu_;
  std::vector<Entry> idle_ GUARDED_BY(mu_);
  int64_t newest_load_ GUARDED_BY(mu_) = 0;  // the newest model leased so far
};

}  // namespace pst

#endif  // PST_SERVE_PREDICTOR_POOL_H_

// ModelHolder: the model the server answers with now. The watcher (or
// start-up, for a plain model.bin) publishes each new model whole; every
// request takes the current one once and keeps it to the end, so an answer
// comes from one model even when another is published meanwhile.
//
// Thread safety: every method may be called from any thread.
#ifndef PST_SERVE_MODEL_HOLDER_H_
#define PST_SERVE_MODEL_HOLDER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "serve/served_model.h"

namespace pst {

class ModelHolder {
 public:
  // Why no model is served until the first one is published (a 503's text).
  explicit ModelHolder(std::string why_none) : why_none_(std::move(why_none)) {}

  // The model to answer with; null before the first, and then *why_none
  // (when given) says why.
  std::shared_ptr<const ServedModel> Get(std::string* why_none = nullptr) const EXCLUDES(mu_);

  // Serves `model` from now on; sets its `load` number.
  void Publish(std::unique_ptr<ServedModel> model) EXCLUDES(mu_);

  // The reason Get() gives while there is no model yet.
  void SetWhyNone(std::string why_none) EXCLUDES(mu_);

  // Models published so far.
  int64_t loads() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::shared_ptr<const ServedModel> model_ GUARDED_BY(mu_);
  std::string why_none_ GUARDED_BY(mu_);
  int64_t loads_ GUARDED_BY(mu_) = 0;
};

}  // namespace pst

#endif  // PST_SERVE_MODEL_HOLDER_H_

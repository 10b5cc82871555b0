#include "transport/request_context.h"

#include <glog/logging.h>

namespace pst {

DeferredReply RequestContext::Defer() {
  CHECK(!deferred_) << "a request can be deferred only once";
  deferred_ = true;
  return DeferredReply{std::move(address_), request_id_};
}

}  // namespace pst

#include "ps/ps_failure.h"

namespace pst {

bool IsPsFailure(const Status& status) {
  const Code c = status.code();
  return c == Code::kDeadlineExceeded || c == Code::kUnavailable || c == Code::kFailedPrecondition;
}

}  // namespace pst

// IsPsFailure: whether a failed request means a lost ps, one place for the
// chief (which recovers the cluster) and the workers (which wait out the
// recovery).
#ifndef PST_PS_PS_FAILURE_H_
#define PST_PS_PS_FAILURE_H_

#include "common/status.h"

namespace pst {

// A ps that dies can fail any request before a probe notices it: true for
// such failures (deadline, unavailable, not initialized: restarted empty),
// which call for a recovery; false for OK and for other errors.
bool IsPsFailure(const Status& status);

}  // namespace pst

#endif  // PST_PS_PS_FAILURE_H_

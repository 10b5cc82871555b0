// A benchmark has nothing to do after a failed call but stop and say which.
#ifndef PST_BENCH_CHECK_OK_H_
#define PST_BENCH_CHECK_OK_H_

#include <glog/logging.h>

#include "common/status.h"

namespace pst {

inline void CheckOk(const Status& status, const char* what) {
  CHECK(status.ok()) << what << ": " << status.ToString();
}

}  // namespace pst

#endif  // PST_BENCH_CHECK_OK_H_

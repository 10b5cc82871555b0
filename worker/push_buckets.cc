#include "worker/push_buckets.h"

#include <glog/logging.h>

#include <utility>

namespace pst {

PushBuckets::PushBuckets(std::vector<int64_t> variable_bytes, int64_t bucket_bytes)
    : variable_bytes_(std::move(variable_bytes)), bucket_bytes_(bucket_bytes) {
  CHECK_GE(bucket_bytes_, 0);
}

void PushBuckets::StartStep() {
  pending_.clear();
  pending_bytes_ = 0;
  reported_ = 0;
}

std::vector<int> PushBuckets::Ready(int first, int end) {
  CHECK(0 <= first && first <= end && static_cast<size_t>(end) <= variable_bytes_.size());
  for (int v = first; v < end; ++v) {
    pending_.push_back(v);
    pending_bytes_ += variable_bytes_[v];
  }
  reported_ += end - first;
  CHECK_LE(reported_, variable_bytes_.size()) << "a variable was reported twice";
  if (pending_.empty() || (pending_bytes_ < bucket_bytes_ && !complete())) return {};
  pending_bytes_ = 0;
  return std::exchange(pending_, {});
}

}  // namespace pst

// PushBuckets: which of the gradients a model reports as ready
// (Model::GradientsReady) a worker pushes now, under --push_bucket_bytes.
//
// Each push message has a fixed cost (a request, a reply, the thread
// hand-offs on both ends), so, as DistributedDataParallel's gradient
// buckets do, reported gradients collect until they hold at least
// bucket_bytes and then go out together; the report that completes the
// step closes the last part, whatever its size. With bucket_bytes 0 every
// report is a part of its own. A plain object: it sends nothing.
#ifndef PST_WORKER_PUSH_BUCKETS_H_
#define PST_WORKER_PUSH_BUCKETS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pst {

class PushBuckets {
 public:
  // variable_bytes[i]: the size of variable i's gradient.
  PushBuckets(std::vector<int64_t> variable_bytes, int64_t bucket_bytes);

  // A new step: nothing reported yet.
  void StartStep();
  // Variables [first, end) are ready (each reported once per step):
  // returns the variables to push now, in the order reported; empty while
  // the bucket fills.
  std::vector<int> Ready(int first, int end);
  // Every variable reported this step (the last part has been returned).
  bool complete() const { return reported_ == variable_bytes_.size(); }

 private:
  const std::vector<int64_t> variable_bytes_;
  const int64_t bucket_bytes_;
  std::vector<int> pending_;  // ready, not returned yet
  int64_t pending_bytes_ = 0;
  size_t reported_ = 0;
};

}  // namespace pst

#endif  // PST_WORKER_PUSH_BUCKETS_H_

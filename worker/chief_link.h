// ChiefLink: a worker's connection to the chief: joining the cluster and
// sending training reports (which, like heartbeats, show the worker alive).
//
// Reports are fire-and-forget so they never slow a training step: replies
// (the cluster state) are read when they are there.
//
// Thread safety: none; owned by the training thread.
#ifndef PST_WORKER_CHIEF_LINK_H_
#define PST_WORKER_CHIEF_LINK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/clock.h"
#include "transport/transport.h"

namespace pst {

// Sync mode: the step a worker trains next, and the gradients it aggregates.
struct SyncToken {
  int64_t step = 0;
  int replicas = 0;  // 0: the shards' configured N (a chief of before auto)
};

struct JoinResult {
  uint64_t cluster_id = 0;
  int64_t train_steps = 0;
  bool training_over = false;  // joined after the chief began stopping
};

struct TrainingReport {
  int64_t step = 0;  // global step after this worker's last push
  float loss = 0;
  int64_t examples = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
  int64_t batches_per_epoch = 0;
  float step_time_ms = 0;
  bool done = false;
};

// --follow: a file a worker finished, with its progressive validation
// (wire::FileReport).
struct FileResult {
  std::string path;  // empty: none
  int64_t examples = 0;
  int64_t positives = 0;
  double auc = 0;
  double log_loss = 0;
  std::string error;  // why the file was not trained (it could not be read)
};

class ChiefLink {
 public:
  // `transport` is borrowed and must outlive the link.
  ChiefLink(Transport& transport, ChannelOptions options);

  // Waits (retrying) until the chief has opened training, `deadline`
  // passes (DeadlineExceeded) or `stop` is set (Aborted).
  // FailedPrecondition when the chief's job (`job`: Job::Describe()) or
  // placement hash differs from ours.
  // `ps_replicas`: this worker's --ps_replicas, which must be the chief's.
  StatusOr<JoinResult> Join(uint64_t placement_hash, const std::string& job,
                            MonotonicClock::TimePoint deadline, const std::atomic<bool>& stop,
                            int ps_replicas = 1);

  // Sync mode: this worker's next token, or nullopt when the chief is
  // stopping the cluster. The request is repeated every second
  // while waiting (the chief may have restarted); a token answering any of
  // them is taken. DeadlineExceeded after `deadline` (--join_timeout_ms),
  // Aborted within a second of `stop` being set (a signal).
  StatusOr<std::optional<SyncToken>> TakeToken(MonotonicClock::TimePoint deadline,
                                               const std::atomic<bool>& stop);

  // Sync mode: the step of the last token failed before its gradient
  // reached every ps (a ps stalled or died): the next TakeToken asks for the
  // current step again instead of waiting for the next one, which would need
  // this very gradient when no spare worker covers for it. A ps that did
  // receive the gradient drops the second push of the step as a duplicate.
  void ReturnToken() { last_token_ = -1; }

  // SSP mode: waits until the chief lets this worker, which has completed
  // `completed` steps, start the next one (true), or says the cluster is
  // stopping (false). Repeated every second like TakeToken (each repeat
  // also lets the chief act on a worker declared dead meanwhile); the same
  // deadline and `stop`.
  StatusOr<bool> AwaitClock(int64_t completed, MonotonicClock::TimePoint deadline,
                            const std::atomic<bool>& stop);

  // --follow: reports `finished` (if it names a file) and asks for the
  // next file to train: its path, "" when none waits yet (ask again
  // later), nullopt when the chief is stopping. Repeated every second like
  // TakeToken, with the same deadline and `stop`.
  StatusOr<std::optional<std::string>> NextFile(const FileResult& finished,
                                                MonotonicClock::TimePoint deadline,
                                                const std::atomic<bool>& stop);

  // Sends a report without waiting for the answer.
  Status Report(const TrainingReport& report);
  // Sends the final report; waits up to 2 s for the chief to acknowledge it.
  Status Leave(const TrainingReport& report);
  // True once a reply said the chief is stopping the cluster.
  bool stopping();

 private:
  OutgoingMessage ReportMessage(const TrainingReport& report) const;
  // Sends `request` every second until one of them is answered; `what`
  // names the answer in errors ("token").
  StatusOr<ReceivedMessage> AskRepeatedly(const OutgoingMessage& request,
                                          MonotonicClock::TimePoint deadline,
                                          const std::atomic<bool>& stop, const std::string& what);
  void DrainReplies();

  std::unique_ptr<Connection> channel_;
  bool stopping_ = false;
  // The step of the last token taken and used (-1: none yet, or returned),
  // sent with each token request: the chief grants the current step unless
  // it is this one.
  int64_t last_token_ = -1;
};

}  // namespace pst

#endif  // PST_WORKER_CHIEF_LINK_H_

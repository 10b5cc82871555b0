// GradientStreamer: an async worker's push under --overlap, sent as the
// model's backward pass makes the gradients (wait-free backpropagation).
//
// A step goes: StartStep; the model's Model::GradientsReady reports reach
// Ready, which groups them into buckets (PushBuckets). Once the first bucket
// is full it collects the previous step's push (PsClient::MakeRoomForPush;
// under --ps_replicas the push of the step before that, two being in
// flight: its global step may say training is over, and then nothing of
// this step is sent and every push in flight is collected), then sends
// each bucket of finite gradients as a part of this step's push with its
// variables' next values pulled back by it (PsClient::SendPushPartAndPull;
// under --ps_replicas, by a pull right behind it), so they travel while
// earlier layers are differentiated; the part that completes the step
// increments the global step. Finish then takes the pulled values
// (PsClient::TakePullsBehindPush); the push's acknowledgement is collected
// when a later step's first part is ready. A non-finite gradient (checked
// as its part is built) stops the sending: the parts before it were
// finite, so nothing non-finite reaches a ps.
#ifndef PST_WORKER_GRADIENT_STREAMER_H_
#define PST_WORKER_GRADIENT_STREAMER_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"
#include "ps/ps_client.h"
#include "worker/push_buckets.h"
#include "worker/step_phases.h"

namespace pst {

class GradientStreamer {
 public:
  // model_variables[i] is pushed as placement variable placement_ids[i].
  GradientStreamer(PsClient* ps, std::vector<VariableSpec> model_variables,
                   std::vector<int> placement_ids, int64_t bucket_bytes);

  // A step whose gradients the model writes into *grads; a previous push
  // acknowledged at or past train_steps ends training.
  void StartStep(const std::vector<Tensor>* grads, int64_t train_steps);
  // Model::GradientsReady.
  void Ready(int first, int end);

  // Once the model returned `computed`. Returns the previous push's summary
  // (global step -1 when there was none): at or past train_steps, this
  // step was not pushed. Otherwise the step was pushed whole and the next
  // step's values pulled into *values (*pulled set), or, with *diverged
  // set, not pushed whole: what was sent is acknowledged. On an error what
  // was in flight is abandoned.
  StatusOr<PushSummary> Finish(const StatusOr<float>& computed, std::vector<Tensor>* values,
                               bool* pulled, std::optional<std::string>* diverged);

  // Of the steps pushed whole so far.
  const StepPhases& phases() const { return phases_; }

 private:
  enum class State { kFirstPart, kSending, kOver, kNonFinite, kFailed };
  // Sends a full bucket (model variable indices) and pulls behind it.
  void Send(const std::vector<int>& part);

  PsClient* const ps_;
  const std::vector<VariableSpec> model_variables_;
  const std::vector<int> placement_ids_;
  PushBuckets buckets_;
  const std::vector<Tensor>* grads_ = nullptr;
  int64_t train_steps_ = 0;
  State state_ = State::kFirstPart;
  PushSummary acked_;                      // the previous push's
  Status error_;                           // kFailed
  std::optional<std::string> non_finite_;  // kNonFinite: the variable
  MonotonicClock::TimePoint step_start_;
  StepPhases phases_;
};

}  // namespace pst

#endif  // PST_WORKER_GRADIENT_STREAMER_H_

#include "worker/gradient_streamer.h"

#include <glog/logging.h>

#include <cmath>
#include <utility>

#include "common/clock.h"
#include "worker/divergence.h"

namespace pst {
namespace {

std::vector<int64_t> GradientBytes(const std::vector<VariableSpec>& variables) {
  std::vector<int64_t> bytes;
  for (const VariableSpec& spec : variables) {
    bytes.push_back(NumElements(spec.shape) * static_cast<int64_t>(DTypeSize(spec.dtype)));
  }
  return bytes;
}

}  // namespace

GradientStreamer::GradientStreamer(PsClient* ps, std::vector<VariableSpec> model_variables,
                                   std::vector<int> placement_ids, int64_t bucket_bytes)
    : ps_(ps),
      model_variables_(std::move(model_variables)),
      placement_ids_(std::move(placement_ids)),
      buckets_(GradientBytes(model_variables_), bucket_bytes) {
  CHECK_EQ(model_variables_.size(), placement_ids_.size());
}

void GradientStreamer::StartStep(const std::vector<Tensor>* grads, int64_t train_steps) {
  step_start_ = SteadyClock().Now();
  phases_.StartStep();
  grads_ = grads;
  train_steps_ = train_steps;
  state_ = State::kFirstPart;
  acked_ = PushSummary();
  error_ = Status::OK();
  non_finite_.reset();
  buckets_.StartStep();
}

void GradientStreamer::Ready(int first, int end) {
  if (state_ != State::kFirstPart && state_ != State::kSending) return;
  const std::vector<int> part = buckets_.Ready(first, end);
  if (part.empty()) return;
  if (state_ == State::kFirstPart) {
    // As late as it can be: the acknowledgement (under --ps_replicas, once
    // the backups hold the push) has had the backward pass so far to come
    // (under --ps_replicas, of the push before the last: two are in flight).
    const auto asked = SteadyClock().Now();
    StatusOr<std::optional<PushSummary>> acked = ps_->MakeRoomForPush();
    phases_.Add(StepPhases::kAcknowledgement, SteadyClock().Now() - asked);
    if (!acked.ok()) {
      error_ = acked.status();
      state_ = State::kFailed;
      return;
    }
    acked_ = acked->value_or(PushSummary());
    if (acked_.global_step >= train_steps_) {
      // Over. A push still in flight is collected too: the worker reports
      // holding only once everything it sent is acknowledged.
      StatusOr<std::optional<PushSummary>> rest = ps_->FinishPush();
      if (!rest.ok()) {
        error_ = rest.status();
        state_ = State::kFailed;
        return;
      }
      if (*rest) acked_.Add(**rest);
      state_ = State::kOver;
      return;
    }
    state_ = State::kSending;
  }
  const auto sending = SteadyClock().Now();
  Send(part);
  phases_.Add(StepPhases::kSending, SteadyClock().Now() - sending);
}

void GradientStreamer::Send(const std::vector<int>& part) {
  std::vector<int> variables;
  std::vector<Tensor> grads;
  for (const int v : part) {
    variables.push_back(placement_ids_[v]);
    grads.push_back((*grads_)[v]);  // shares the buffer: sent without a copy
  }
  std::optional<size_t> not_finite;
  // The part's next values come back with it (or right behind it), on
  // their way while backprop goes on.
  const Status sent = ps_->SendPushPartAndPull(variables, grads, buckets_.complete(), &not_finite);
  if (sent.ok() && not_finite) {
    non_finite_ = model_variables_[part[*not_finite]].name;
    state_ = State::kNonFinite;
    return;
  }
  if (!sent.ok()) {
    error_ = sent;
    state_ = State::kFailed;
  }
}

StatusOr<PushSummary> GradientStreamer::Finish(const StatusOr<float>& computed,
                                               std::vector<Tensor>* values, bool* pulled,
                                               std::optional<std::string>* diverged) {
  *pulled = false;
  if (state_ == State::kFailed) return error_;
  if (!computed.ok()) {
    (void)ps_->FinishPush();  // what went out was computed before the failure
    return computed.status();
  }
  if (state_ == State::kOver) return acked_;
  const float loss = *computed;
  if (non_finite_ || !std::isfinite(loss)) {
    // Reported as a whole step's would be: the loss first.
    *diverged =
        std::isfinite(loss) ? GradientNotFinite(*non_finite_, loss) : NonFiniteStep(loss, {}, {});
    PST_RETURN_IF_ERROR(ps_->FinishPush().status());
    return acked_;
  }
  CHECK(buckets_.complete()) << "the model did not report every gradient";
  const auto waiting = SteadyClock().Now();
  PST_RETURN_IF_ERROR(ps_->TakePullsBehindPush(placement_ids_, values));
  const auto now = SteadyClock().Now();
  phases_.Add(StepPhases::kPull, now - waiting);
  phases_.EndStep(now - step_start_);
  *pulled = true;
  return acked_;
}

}  // namespace pst

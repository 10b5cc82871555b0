#include "ps/replication/replicator.h"

#include <glog/logging.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "common/clock.h"
#include "common/thread_name.h"

namespace pst {
namespace {

uint64_t BytesOf(const NamedTensors& tensors) {
  uint64_t bytes = 0;
  for (const auto& [name, t] : tensors) bytes += t.num_bytes();
  return bytes;
}

}  // namespace

Replicator::Replicator(int shard, BackupShipper* shipper, TakeSnapshot snapshot,
                       ReadWatermark watermark, OnDeposed on_deposed)
    : shard_(shard),
      shipper_(shipper),
      snapshot_(std::move(snapshot)),
      watermark_(std::move(watermark)),
      on_deposed_(std::move(on_deposed)),
      closed_(FailedPrecondition("shard " + std::to_string(shard) + " has no chain yet")),
      thread_([this] { Run(); }) {}

Replicator::~Replicator() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  thread_.join();
}

void Replicator::SetChain(int64_t epoch, std::vector<int> backups) {
  {
    MutexLock lock(mu_);
    bool grown = false;
    for (int b : backups) {
      grown = grown || std::find(backups_.begin(), backups_.end(), b) == backups_.end();
    }
    epoch_ = epoch;
    backups_ = std::move(backups);
    closed_ = Status::OK();
    if (grown) AskForRound();  // fills them
  }
  wake_.NotifyAll();
}

void Replicator::ShipSoon() {
  {
    MutexLock lock(mu_);
    if (backups_.empty() || !closed_.ok()) return;
    AskForRound();
  }
  wake_.NotifyAll();
}

void Replicator::Close(const Status& why) {
  {
    MutexLock lock(mu_);
    closed_ = why;
  }
  FailWaiting(why);
}

void Replicator::AfterReplicated(Watermark needed, Done done) {
  Status refused;
  {
    MutexLock lock(mu_);
    if (stopping_) {
      refused = Unavailable("shard " + std::to_string(shard_) + ": the ps is stopping");
    } else if (!closed_.ok()) {
      refused = closed_;
    } else if (!backups_.empty()) {
      waiting_.push_back({needed, std::move(done)});
      wake_.NotifyAll();
      return;
    }
  }
  done(refused);  // OK: the primary alone holds the shard
}

void Replicator::FailWaiting(const Status& why) {
  std::vector<Waiter> failed;
  {
    MutexLock lock(mu_);
    failed.swap(waiting_);
  }
  for (Waiter& w : failed) w.done(why);
}

uint64_t Replicator::rounds() const {
  MutexLock lock(mu_);
  return rounds_;
}

uint64_t Replicator::bytes_shipped() const {
  MutexLock lock(mu_);
  return bytes_shipped_;
}

void Replicator::AskForRound() {
  waiting_.push_back({Watermark{}, [](const Status&) {}});  // covered by any state
}

bool Replicator::RoundDue() const {
  if (waiting_.empty()) return false;
  const Watermark now = watermark_();
  return std::any_of(waiting_.begin(), waiting_.end(),
                     [&](const Waiter& w) { return now.Covers(w.needed); });
}

void Replicator::Run() {
  NameThisThread("replicator");
  for (;;) {
    int64_t epoch;
    std::vector<int> backups;
    {
      MutexLock lock(mu_);
      while (!stopping_ && !RoundDue()) wake_.Wait(mu_);
      if (stopping_) return;
      epoch = epoch_;
      backups = backups_;
    }
    Watermark shipped;
    if (backups.empty() || ShipRound(epoch, backups, &shipped).ok()) {
      // Without backups (the chief took the last one out), the primary
      // alone holds what it applied.
      Complete(backups.empty() ? Watermark{UINT64_MAX, INT64_MAX} : shipped);
      continue;
    }
    // A backup that did not answer: again, unless the chain changes or the
    // ps stops meanwhile.
    MutexLock lock(mu_);
    if (!stopping_) wake_.WaitUntil(mu_, SteadyClock().Now() + kRetryPause);
  }
}

Status Replicator::ShipRound(int64_t epoch, const std::vector<int>& backups, Watermark* shipped) {
  StatusOr<ShardState> state = snapshot_();
  if (!state.ok()) return state.status();
  const uint64_t bytes = BytesOf(state->tensors);
  const Watermark watermark = state->watermark;
  std::vector<Status> answers;
  for (int backup : backups) answers.push_back(shipper_->Send(backup, shard_, epoch, *state));
  // The snapshot shares the values (copy-on-write): held while the backups
  // answer, it would make every push applied meanwhile copy the shard.
  state = ShardState();
  for (size_t i = 0; i < backups.size(); ++i) {
    if (answers[i].ok()) answers[i] = shipper_->Await(backups[i]);
  }
  for (size_t i = 0; i < backups.size(); ++i) {
    const Status& s = answers[i];
    if (s.code() == Code::kAborted) {
      on_deposed_();
      Close(FailedPrecondition("shard " + std::to_string(shard_) +
                               ": this ps was deposed as its primary (" + s.message() + ")"));
      return s;
    }
    if (!s.ok()) {
      LOG_EVERY_N(WARNING, 100) << "shard " << shard_ << ": shipping to backup ps:" << backups[i]
                                << " failed: " << s.ToString();
      return s;
    }
  }
  {
    MutexLock lock(mu_);
    ++rounds_;
    bytes_shipped_ += bytes * backups.size();
  }
  *shipped = watermark;
  return Status::OK();
}

void Replicator::Complete(const Watermark& shipped) {
  std::vector<Waiter> done;
  {
    MutexLock lock(mu_);
    auto held = std::stable_partition(waiting_.begin(), waiting_.end(),
                                      [&](const Waiter& w) { return !shipped.Covers(w.needed); });
    std::move(held, waiting_.end(), std::back_inserter(done));
    waiting_.erase(held, waiting_.end());
  }
  for (Waiter& w : done) w.done(Status::OK());
}

}  // namespace pst

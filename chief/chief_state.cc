#include "chief/chief_state.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

#include "common/clock.h"

namespace pst {
namespace {

using TimePoint = MonotonicClock::TimePoint;

// Records that task `name` was heard from; says so when it was declared dead.
void MarkAlive(const std::string& name, TimePoint now, bool* dead, TimePoint* last_seen) {
  *last_seen = now;
  if (*dead) LOG(INFO) << name << " is alive again";
  *dead = false;
}

std::string WorkerName(size_t i) { return "worker:" + std::to_string(i); }
std::string PsName(size_t i) { return "ps:" + std::to_string(i); }

}  // namespace

ChiefState::ChiefState(uint64_t placement_hash, int64_t train_steps, int num_workers, int num_ps,
                       std::string job, const MonotonicClock& clock)
    : clock_(clock),
      placement_hash_(placement_hash),
      job_(std::move(job)),
      train_steps_(train_steps),
      workers_(num_workers),
      ps_(num_ps) {}

wire::ClusterState ChiefState::state() const {
  MutexLock lock(mu_);
  return state_;
}

void ChiefState::set_state(wire::ClusterState state) {
  MutexLock lock(mu_);
  state_ = state;
}

wire::ClusterState ChiefState::RecordJoin(int worker) {
  MutexLock lock(mu_);
  WorkerInfo& w = workers_[worker];
  w.heard = true;
  w.waiting = state_ == wire::ClusterState::Starting;
  if (state_ == wire::ClusterState::Training) {
    w.joined = true;
    w.left = false;
    w.reported_step = -1;
  }
  MarkAlive(WorkerName(worker), clock_.Now(), &w.dead, &w.last_seen);
  return state_;
}

bool ChiefState::Adopt(int worker) {
  MutexLock lock(mu_);
  WorkerInfo& w = workers_[worker];
  w.heard = true;
  if (w.joined) return false;
  w.joined = true;
  MarkAlive(WorkerName(worker), clock_.Now(), &w.dead, &w.last_seen);
  return true;
}

void ChiefState::RecordSeen(int worker) {
  MutexLock lock(mu_);
  workers_[worker].heard = true;
  MarkAlive(WorkerName(worker), clock_.Now(), &workers_[worker].dead, &workers_[worker].last_seen);
}

void ChiefState::RecordHeartbeat(wire::Role role, int index) {
  if (role == wire::Role::Worker) return RecordSeen(index);
  MutexLock lock(mu_);
  PsInfo& ps = ps_[index];
  ps.seen = true;
  MarkAlive(PsName(index), clock_.Now(), &ps.dead, &ps.last_seen);
}

void ChiefState::ExcuseSilences() {
  MutexLock lock(mu_);
  silences_count_from_ = clock_.Now();
}

std::vector<std::string> ChiefState::DeclareSilentTasksDead(std::chrono::milliseconds timeout) {
  MutexLock lock(mu_);
  const auto now = clock_.Now();
  const MonotonicClock::TimePoint counts_from = silences_count_from_;
  const auto silent = [&](MonotonicClock::TimePoint last_seen) {
    return now - std::max(last_seen, counts_from) > timeout;
  };
  std::vector<std::string> dead;
  for (size_t i = 0; i < ps_.size(); ++i) {
    PsInfo& ps = ps_[i];
    if (ps.seen && !ps.dead && silent(ps.last_seen)) {
      ps.dead = true;
      dead.push_back(PsName(i));
    }
  }
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerInfo& w = workers_[i];
    if (((w.joined && !w.left) || w.waiting) && !w.dead && silent(w.last_seen)) {
      w.dead = true;
      dead.push_back(WorkerName(i));
    }
  }
  deaths_ += static_cast<int64_t>(dead.size());
  return dead;
}

void ChiefState::RecordReport(int worker, int64_t step, const wire::Report& report) {
  MutexLock lock(mu_);
  WorkerInfo& w = workers_[worker];
  w.reported_step = step;
  MarkAlive(WorkerName(worker), clock_.Now(), &w.dead, &w.last_seen);
  if (!std::isfinite(report.loss()) && non_finite_loss_.empty()) {
    non_finite_loss_ =
        WorkerName(worker) + " reported a training loss of " + std::to_string(report.loss());
  }
  if (report.done()) {
    w.left = true;
    return;
  }
  ++w.reports;
  w.examples += report.examples();
  total_examples_ += report.examples();
  ++window_.reports;
  loss_sum_ += report.loss();
  step_ms_sum_ += report.step_time_ms();
  window_.examples += report.examples();
  window_.epoch = report.epoch();
  window_.batch = report.batch();
  window_.batches_per_epoch = report.batches_per_epoch();
}

std::string ChiefState::non_finite_loss() const {
  MutexLock lock(mu_);
  return non_finite_loss_;
}

ReportWindow ChiefState::TakeWindow() {
  MutexLock lock(mu_);
  ReportWindow w = window_;
  if (w.reports > 0) {
    w.mean_loss = loss_sum_ / w.reports;
    w.mean_step_ms = step_ms_sum_ / w.reports;
  }
  window_ = ReportWindow();
  loss_sum_ = step_ms_sum_ = 0;
  return w;
}

void ChiefState::AwaitEarlierWorkersFor(std::chrono::milliseconds window) {
  MutexLock lock(mu_);
  earlier_workers_until_ = clock_.Now() + window;
}

bool ChiefState::EveryWorkerDone() const {
  MutexLock lock(mu_);
  if (clock_.Now() < earlier_workers_until_) return false;
  for (const WorkerInfo& w : workers_) {
    if (((w.joined && !w.left) || w.waiting) && !w.dead) return false;
  }
  return true;
}

bool ChiefState::EveryWorkerHeardFrom() const {
  MutexLock lock(mu_);
  for (const WorkerInfo& w : workers_) {
    if (!w.heard) return false;
  }
  return true;
}

std::vector<int> ChiefState::WorkersShortOf(int64_t step) const {
  MutexLock lock(mu_);
  std::vector<int> short_of;
  for (size_t i = 0; i < workers_.size(); ++i) {
    const WorkerInfo& w = workers_[i];
    if (w.joined && !w.left && !w.dead && w.reported_step < step) {
      short_of.push_back(static_cast<int>(i));
    }
  }
  return short_of;
}

void ChiefState::ForgetReportedSteps() {
  MutexLock lock(mu_);
  for (WorkerInfo& w : workers_) w.reported_step = -1;
}

int ChiefState::live_workers() const {
  MutexLock lock(mu_);
  int live = 0;
  for (const WorkerInfo& w : workers_) live += w.joined && !w.left && !w.dead;
  return live;
}

std::vector<bool> ChiefState::gone_worker_mask() const {
  MutexLock lock(mu_);
  std::vector<bool> gone;
  for (const WorkerInfo& w : workers_) gone.push_back(w.left || w.dead);
  return gone;
}

int ChiefState::live_ps() const {
  MutexLock lock(mu_);
  int live = 0;
  for (const PsInfo& ps : ps_) live += ps.seen && !ps.dead;
  return live;
}

int64_t ChiefState::deaths() const {
  MutexLock lock(mu_);
  return deaths_;
}

int64_t ChiefState::total_examples() const {
  MutexLock lock(mu_);
  return total_examples_;
}

}  // namespace pst

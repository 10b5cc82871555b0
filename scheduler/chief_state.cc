#include "scheduler/chief_state.h"

namespace pst {

ChiefState::ChiefState(uint64_t placement_hash, int64_t train_steps, int num_workers)
    : placement_hash_(placement_hash), train_steps_(train_steps), workers_(num_workers) {}

wire::ClusterState ChiefState::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void ChiefState::set_state(wire::ClusterState state) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = state;
}

void ChiefState::RecordJoin(int worker) {
  std::lock_guard<std::mutex> lock(mu_);
  workers_[worker].joined = true;
  workers_[worker].left = false;
  workers_[worker].last_seen = std::chrono::steady_clock::now();
}

void ChiefState::RecordSeen(int worker) {
  std::lock_guard<std::mutex> lock(mu_);
  workers_[worker].last_seen = std::chrono::steady_clock::now();
  workers_[worker].dead = false;
}

std::vector<int> ChiefState::DeclareSilentWorkersDead(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  std::vector<int> dead;
  for (size_t i = 0; i < workers_.size(); ++i) {
    WorkerInfo& w = workers_[i];
    if (w.joined && !w.left && !w.dead && now - w.last_seen > timeout) {
      w.dead = true;
      dead.push_back(static_cast<int>(i));
    }
  }
  return dead;
}

void ChiefState::RecordReport(int worker, const wire::Report& report) {
  std::lock_guard<std::mutex> lock(mu_);
  WorkerInfo& w = workers_[worker];
  w.last_seen = std::chrono::steady_clock::now();
  w.dead = false;
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

ReportWindow ChiefState::TakeWindow() {
  std::lock_guard<std::mutex> lock(mu_);
  ReportWindow w = window_;
  if (w.reports > 0) {
    w.mean_loss = loss_sum_ / w.reports;
    w.mean_step_ms = step_ms_sum_ / w.reports;
  }
  window_ = ReportWindow();
  loss_sum_ = step_ms_sum_ = 0;
  return w;
}

std::vector<WorkerInfo> ChiefState::Workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return workers_;
}

bool ChiefState::AllJoinedWorkersLeft() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const WorkerInfo& w : workers_) {
    if (w.joined && !w.left && !w.dead) return false;
  }
  return true;
}

int ChiefState::live_workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  int live = 0;
  for (const WorkerInfo& w : workers_) live += w.joined && !w.left && !w.dead;
  return live;
}

int64_t ChiefState::total_examples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_examples_;
}

}  // namespace pst

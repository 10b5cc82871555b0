#include "bench/transport/round_timer.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <utility>

#include "bench/bench_stats.h"
#include "bench/bench_timing.h"

namespace pst {
namespace {

Latency Summarize(std::vector<double> us) {
  Latency l;
  if (us.empty()) return l;
  std::sort(us.begin(), us.end());
  l.mean = std::accumulate(us.begin(), us.end(), 0.0) / us.size();
  l.p50 = Percentile(us, 0.50);
  l.p99 = Percentile(us, 0.99);
  return l;
}

}  // namespace

Repeat MedianRepeat(const std::vector<Repeat>& reps) {
  auto med = [&reps](auto field) {
    std::vector<double> v;
    for (const Repeat& r : reps) v.push_back(field(r));
    return Median(v);
  };
  Repeat m;
  m.bytes_per_s = med([](const Repeat& r) { return r.bytes_per_s; });
  m.rounds = static_cast<int64_t>(med([](const Repeat& r) { return double(r.rounds); }));
  auto lat = [&med](auto pick) {
    Latency l;
    l.mean = med([&pick](const Repeat& r) { return pick(r).mean; });
    l.p50 = med([&pick](const Repeat& r) { return pick(r).p50; });
    l.p99 = med([&pick](const Repeat& r) { return pick(r).p99; });
    return l;
  };
  m.pull = lat([](const Repeat& r) { return r.pull; });
  m.push = lat([](const Repeat& r) { return r.push; });
  m.round = lat([](const Repeat& r) { return r.round; });
  return m;
}

void RoundTimer::WarmUp(int min_rounds, double seconds) {
  const auto until = SteadyClock().Now() + std::chrono::duration<double>(seconds);
  for (int n = 0; n < min_rounds || SteadyClock().Now() < until; ++n) {
    pull_();
    push_();
  }
}

void RoundTimer::Slice(double seconds) {
  WarmUp(2, 0);
  const auto start = SteadyClock().Now();
  const auto end = start + std::chrono::duration_cast<MonotonicClock::Duration>(
                               std::chrono::duration<double>(seconds));
  auto t0 = start;
  int n = 0;
  do {
    pull_();
    const auto t1 = SteadyClock().Now();
    push_();
    const auto t2 = SteadyClock().Now();
    pull_us_.push_back(Micros(t1 - t0));
    push_us_.push_back(Micros(t2 - t1));
    round_us_.push_back(Micros(t2 - t0));
    t0 = t2;
    ++n;
  } while (t0 < end || n < 3);
  timed_ += t0 - start;
}

Repeat RoundTimer::TakeRepeat(size_t bytes) {
  Repeat r;
  r.rounds = static_cast<int64_t>(round_us_.size());
  r.bytes_per_s = 2.0 * bytes * r.rounds / Seconds(timed_);
  r.pull = Summarize(std::move(pull_us_));
  r.push = Summarize(std::move(push_us_));
  r.round = Summarize(std::move(round_us_));
  pull_us_.clear();
  push_us_.clear();
  round_us_.clear();
  timed_ = MonotonicClock::Duration::zero();
  return r;
}

}  // namespace pst

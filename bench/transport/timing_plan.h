// How long each configuration runs: a warm-up, then repeats, each of which
// alternates the configuration and its baseline in short slices so that load
// from elsewhere hits both alike.
#ifndef PST_BENCH_TRANSPORT_TIMING_PLAN_H_
#define PST_BENCH_TRANSPORT_TIMING_PLAN_H_

namespace pst {

struct TimingPlan {
  double warmup_s = 0;
  int repeats = 1;
  double seconds_per_repeat = 0;
  int slices = 1;  // per repeat
};

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_TIMING_PLAN_H_

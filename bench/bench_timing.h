// A clock duration as the number the benchmarks print.
#ifndef PST_BENCH_BENCH_TIMING_H_
#define PST_BENCH_BENCH_TIMING_H_

#include <chrono>

#include "common/clock.h"

namespace pst {

inline double Seconds(MonotonicClock::Duration d) {
  return std::chrono::duration<double>(d).count();
}

inline double Micros(MonotonicClock::Duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

}  // namespace pst

#endif  // PST_BENCH_BENCH_TIMING_H_

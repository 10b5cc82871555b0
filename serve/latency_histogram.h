// LatencyHistogram: request durations counted into fixed buckets, written as
// a Prometheus histogram (name_bucket{le="..."} cumulative, name_sum,
// name_count). The buckets' upper bounds run from 100 us to 10 s, 1-2.5-5
// per decade, then +Inf.
//
// Thread safety: none; the caller guards it (ServeMetrics does).
#ifndef PST_SERVE_LATENCY_HISTOGRAM_H_
#define PST_SERVE_LATENCY_HISTOGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pst {

class LatencyHistogram {
 public:
  LatencyHistogram();

  void Observe(double seconds);

  // The upper bounds, in seconds, ascending (without +Inf).
  static const std::vector<double>& Bounds();

  // Appends the histogram to a Prometheus text page (monitoring/
  // prometheus_text.h makes the rest of the page; it has no histograms).
  void AppendPrometheus(const std::string& name, const std::string& help, std::string* page) const;

  int64_t count() const { return count_; }

 private:
  std::vector<int64_t> counts_;  // per bucket, not cumulative; the last is +Inf's
  double sum_ = 0;
  int64_t count_ = 0;
};

}  // namespace pst

#endif  // PST_SERVE_LATENCY_HISTOGRAM_H_

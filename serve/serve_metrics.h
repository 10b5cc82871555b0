// ServeMetrics: what the serve executable's GET /metrics shows, in the
// Prometheus text format:
//   pstrain_serve_model_step, pstrain_serve_model_base_step
//       the served export's global step and its base's (0 for a model.bin)
//   pstrain_serve_model_age_seconds
//       since the served model's newest file was written (its mtime)
//   pstrain_serve_model_loads_total       models loaded and served
//   pstrain_serve_requests_total{code}    answered requests, by HTTP status
//   pstrain_serve_request_seconds         a histogram of their durations
//   pstrain_serve_examples_total          lines answered with a probability
// The model gauges are absent while no model is served.
//
// Thread safety: every method may be called from any thread.
#ifndef PST_SERVE_SERVE_METRICS_H_
#define PST_SERVE_SERVE_METRICS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "common/mutex.h"
#include "serve/latency_histogram.h"
#include "serve/served_model.h"

namespace pst {

class ServeMetrics {
 public:
  // One answered request: its status, how long it took, and the examples
  // it answered (0 unless a prediction).
  void RecordRequest(int status, double seconds, int64_t examples) EXCLUDES(mu_);

  // The page; `model` is the one served (null: none yet), `loads` how many
  // were, `now` the wall clock's time.
  std::string Page(const ServedModel* model, int64_t loads,
                   std::chrono::system_clock::time_point now) const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<int, int64_t> requests_by_status_ GUARDED_BY(mu_);
  LatencyHistogram latency_ GUARDED_BY(mu_);
  int64_t examples_ GUARDED_BY(mu_) = 0;
};

}  // namespace pst

#endif  // PST_SERVE_SERVE_METRICS_H_

#include "serve/serve_metrics.h"

#include "monitoring/prometheus_text.h"

namespace pst {

void ServeMetrics::RecordRequest(int status, double seconds, int64_t examples) {
  MutexLock lock(mu_);
  ++requests_by_status_[status];
  latency_.Observe(seconds);
  examples_ += examples;
}

std::string ServeMetrics::Page(const ServedModel* model, int64_t loads,
                               std::chrono::system_clock::time_point now) const {
  PrometheusText page;
  if (model != nullptr) {
    page.AddGauge("pstrain_serve_model_step", "Global step of the served export (0: a model.bin)",
                  static_cast<double>(model->step));
    page.AddGauge("pstrain_serve_model_base_step", "Global step of the served export's base",
                  static_cast<double>(model->base_step));
    page.AddGauge("pstrain_serve_model_age_seconds",
                  "Seconds since the served model's newest file was written",
                  std::chrono::duration<double>(now - model->written_at).count());
  }
  page.AddCounter("pstrain_serve_model_loads_total", "Models loaded and served",
                  static_cast<double>(loads));
  MutexLock lock(mu_);
  for (const auto& [status, count] : requests_by_status_) {
    page.AddCounter("pstrain_serve_requests_total", "Requests answered, by HTTP status code",
                    static_cast<double>(count), {{"code", std::to_string(status)}});
  }
  page.AddCounter("pstrain_serve_examples_total", "Lines answered with a probability",
                  static_cast<double>(examples_));
  std::string text = page.text();
  latency_.AppendPrometheus("pstrain_serve_request_seconds",
                            "Seconds to answer a request, from when it has arrived whole", &text);
  return text;
}

}  // namespace pst

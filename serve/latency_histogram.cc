#include "serve/latency_histogram.h"

#include <algorithm>

#include "monitoring/prometheus_text.h"

namespace pst {

const std::vector<double>& LatencyHistogram::Bounds() {
  static const auto* bounds =
      new std::vector<double>{100e-6, 250e-6, 500e-6, 1e-3,   2.5e-3, 5e-3, 10e-3, 25e-3,
                              50e-3,  100e-3, 250e-3, 500e-3, 1,      2.5,  5,     10};
  return *bounds;
}

LatencyHistogram::LatencyHistogram() : counts_(Bounds().size() + 1, 0) {}

void LatencyHistogram::Observe(double seconds) {
  // The first bucket whose bound is >= seconds (Prometheus' le); +Inf past the last.
  const auto& bounds = Bounds();
  ++counts_[std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin()];
  sum_ += seconds;
  ++count_;
}

void LatencyHistogram::AppendPrometheus(const std::string& name, const std::string& help,
                                        std::string* page) const {
  *page += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  int64_t cumulative = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < Bounds().size() ? PrometheusValue(Bounds()[i]) : "+Inf";
    *page += name + "_bucket{le=\"" + le + "\"} " + PrometheusValue(cumulative) + "\n";
  }
  *page += name + "_sum " + PrometheusValue(sum_) + "\n";
  *page += name + "_count " + PrometheusValue(count_) + "\n";
}

}  // namespace pst

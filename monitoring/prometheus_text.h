// PrometheusText: builds a page in the Prometheus text exposition format
// (version 0.0.4): for each metric family a "# HELP" and a "# TYPE" line,
// then its samples, "name{label="value",...} value".
//
// Names are the caller's (this project uses "pstrain_..."); they and label
// names must match the format's grammar, which is CHECKed: a bad name is a
// programming error, not a run-time one. Label values and help texts may
// hold any bytes and are escaped.
//
// Thread safety: none; build a page on one thread.
#ifndef PST_MONITORING_PROMETHEUS_TEXT_H_
#define PST_MONITORING_PROMETHEUS_TEXT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pst {

using PrometheusLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  enum class Type { kGauge, kCounter };

  // Appends one sample of `name`. The first sample of a family writes its
  // HELP and TYPE lines; the samples of a family must be added one after
  // another (a family reopened later is CHECKed), as the format requires.
  void Add(Type type, const std::string& name, const std::string& help, double value,
           const PrometheusLabels& labels = {});
  void AddGauge(const std::string& name, const std::string& help, double value,
                const PrometheusLabels& labels = {}) {
    Add(Type::kGauge, name, help, value, labels);
  }
  void AddCounter(const std::string& name, const std::string& help, double value,
                  const PrometheusLabels& labels = {}) {
    Add(Type::kCounter, name, help, value, labels);
  }

  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::string> families_;  // in the order they were opened
};

// The value as the format writes it: "NaN", "+Inf", "-Inf", integers
// without an exponent up to 2^53, else the shortest round-trip form.
std::string PrometheusValue(double value);
// `value` with backslash, double quote and newline escaped, for a label.
std::string EscapeLabelValue(const std::string& value);

}  // namespace pst

#endif  // PST_MONITORING_PROMETHEUS_TEXT_H_

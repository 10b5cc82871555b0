// MetricsWriter: one JSON object per line, flushed as written, so a run's
// metrics can be read (or plotted) while it trains.
#ifndef PST_CHIEF_REPORTING_METRICS_WRITER_H_
#define PST_CHIEF_REPORTING_METRICS_WRITER_H_

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace pst {

// Fields in insertion order; numbers only (names are fixed identifiers).
class MetricsRecord {
 public:
  MetricsRecord& Add(const std::string& key, double value);
  std::string ToJson() const;

 private:
  std::vector<std::pair<std::string, double>> fields_;
};

class MetricsWriter {
 public:
  // An empty path writes nothing.
  static StatusOr<std::unique_ptr<MetricsWriter>> Open(const std::string& path);
  ~MetricsWriter();
  Status Write(const MetricsRecord& record);

 private:
  explicit MetricsWriter(std::FILE* file) : file_(file) {}
  std::FILE* file_;
};

}  // namespace pst

#endif  // PST_CHIEF_REPORTING_METRICS_WRITER_H_

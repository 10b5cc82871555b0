#include "chief/reporting/metrics_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

namespace pst {

MetricsRecord& MetricsRecord::Add(const std::string& key, double value) {
  fields_.emplace_back(key, value);
  return *this;
}

std::string MetricsRecord::ToJson() const {
  std::string out = "{";
  char number[64];
  for (size_t i = 0; i < fields_.size(); ++i) {
    const double v = fields_[i].second;
    if (std::isfinite(v)) {
      std::snprintf(number, sizeof(number), "%.10g", v);
    } else {
      std::snprintf(number, sizeof(number), "null");  // JSON has no NaN
    }
    out += (i ? ", \"" : "\"") + fields_[i].first + "\": " + number;
  }
  return out + "}";
}

StatusOr<std::unique_ptr<MetricsWriter>> MetricsWriter::Open(const std::string& path) {
  std::FILE* file = nullptr;
  if (!path.empty()) {
    file = std::fopen(path.c_str(), "w");
    if (file == nullptr) {
      return FileError("cannot write metrics file " + path, errno);
    }
  }
  return std::unique_ptr<MetricsWriter>(new MetricsWriter(file));
}

MetricsWriter::~MetricsWriter() {
  if (file_) std::fclose(file_);
}

Status MetricsWriter::Write(const MetricsRecord& record) {
  if (file_ == nullptr) return Status::OK();
  const std::string line = record.ToJson() + "\n";
  if (std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0) {
    return FileError("writing metrics failed", errno);
  }
  return Status::OK();
}

}  // namespace pst

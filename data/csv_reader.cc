#include "data/csv_reader.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

namespace pst {
namespace {

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

void SplitFields(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  for (;;) {
    const size_t comma = line.find(',');
    fields->push_back(Trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return;
    line.remove_prefix(comma + 1);
  }
}

// std::from_chars: locale-independent, and it must consume the whole field.
template <typename T>
bool ParseNumber(std::string_view field, T* value) {
  const char* end = field.data() + field.size();
  const std::from_chars_result result =
      std::from_chars(field.data(), end, *value);
  return result.ec == std::errc() && result.ptr == end;
}

}  // namespace

StatusOr<Dataset> ReadCsvDataset(const std::string& path, int num_classes,
                                 bool has_header) {
  if (num_classes < 1) {
    return InvalidArgument("num_classes must be at least 1, got " +
                           std::to_string(num_classes));
  }
  errno = 0;
  std::ifstream in(path);
  if (!in.is_open()) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  }

  Dataset dataset;
  dataset.num_classes = num_classes;
  std::string line;
  std::vector<std::string_view> fields;
  int64_t line_number = 0;
  int64_t first_row_line = 0;
  auto at = [&] { return path + ":" + std::to_string(line_number) + ": "; };
  while (std::getline(in, line)) {
    ++line_number;
    if (has_header && line_number == 1) continue;
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (Trim(text).empty()) continue;
    SplitFields(text, &fields);

    const int64_t num_fields = fields.size();
    if (first_row_line == 0) {
      if (num_fields < 2) {
        return InvalidArgument(at() +
                               "expected a label and at least one "
                               "feature, found 1 field");
      }
      first_row_line = line_number;
      dataset.feature_dim = num_fields - 1;
    } else if (num_fields != dataset.feature_dim + 1) {
      return InvalidArgument(at() + "row has " + std::to_string(num_fields) +
                             " fields, but the first row (line " +
                             std::to_string(first_row_line) + ") has " +
                             std::to_string(dataset.feature_dim + 1));
    }

    int32_t label = 0;
    if (!ParseNumber(fields[0], &label)) {
      return InvalidArgument(at() + "label '" + std::string(fields[0]) +
                             "' is not an integer");
    }
    if (label < 0 || label >= num_classes) {
      return InvalidArgument(at() + "label " + std::to_string(label) +
                             " is outside [0, " + std::to_string(num_classes) +
                             ")");
    }
    dataset.labels.push_back(label);
    for (int64_t j = 1; j < num_fields; ++j) {
      float value = 0;
      if (!ParseNumber(fields[j], &value) || !std::isfinite(value)) {
        return InvalidArgument(at() + "field " + std::to_string(j + 1) + " '" +
                               std::string(fields[j]) +
                               "' is not a finite number");
      }
      dataset.features.push_back(value);
    }
    ++dataset.size;
  }
  if (in.bad()) return DataLoss(path + ": read failed");
  if (dataset.size == 0) return InvalidArgument(path + ": no data rows");
  return dataset;
}

}  // namespace pst

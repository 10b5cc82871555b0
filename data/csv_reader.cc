#include "data/csv_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#include "common/parse_number.h"

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

bool IsHeader(const std::vector<std::string_view>& fields) {
  return std::none_of(fields.begin(), fields.end(), [](std::string_view f) {
    double value;
    return ParseNumber(f, &value);
  });
}

}  // namespace

StatusOr<Dataset> ReadCsvDataset(const std::string& path, const CsvOptions& options) {
  if (options.num_classes < 0) {
    return InvalidArgument("num_classes must be >= 0, got " + std::to_string(options.num_classes));
  }
  errno = 0;
  std::ifstream in(path);
  if (!in.is_open()) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  }

  Dataset dataset;
  std::string line;
  std::vector<std::string_view> fields;
  std::vector<std::string> names;  // the header's, when there is one
  int64_t line_number = 0, first_row_line = 0, num_fields = 0;
  int label_column = 0;
  int32_t max_label = -1;
  auto at = [&] { return path + ":" + std::to_string(line_number) + ": "; };
  auto column = [&](size_t j) {
    std::string text = "column " + std::to_string(j + 1);
    if (j < names.size()) text += " ('" + names[j] + "')";
    return text;
  };
  while (std::getline(in, line)) {
    ++line_number;
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (Trim(text).empty()) continue;
    SplitFields(text, &fields);
    const bool first = first_row_line == 0 && names.empty();
    if (first && IsHeader(fields)) {
      names.assign(fields.begin(), fields.end());
      continue;
    }
    if (first_row_line == 0) {
      num_fields = static_cast<int64_t>(fields.size());
      if (num_fields < 2) {
        return InvalidArgument(at() + "expected a label and at least one feature, found 1 field");
      }
      label_column = options.label_column < 0 ? num_fields - 1 : options.label_column;
      if (label_column >= num_fields) {
        return InvalidArgument(at() + "label column " + std::to_string(options.label_column) +
                               " is beyond the row's " + std::to_string(num_fields) + " columns");
      }
      first_row_line = line_number;
      dataset.feature_dim = num_fields - 1;
    } else if (static_cast<int64_t>(fields.size()) != num_fields) {
      return InvalidArgument(at() + "row has " + std::to_string(fields.size()) +
                             " fields, but the first row (line " + std::to_string(first_row_line) +
                             ") has " + std::to_string(num_fields));
    }
    int32_t label = 0;
    const std::string_view label_field = fields[label_column];
    if (!ParseNumber(label_field, &label)) {
      return InvalidArgument(at() + column(label_column) + ": label '" + std::string(label_field) +
                             "' is not an integer");
    }
    if (label < 0 || (options.num_classes > 0 && label >= options.num_classes)) {
      return InvalidArgument(
          at() + column(label_column) + ": label " + std::to_string(label) + " is outside [0, " +
          (options.num_classes > 0 ? std::to_string(options.num_classes) : std::string("inf")) +
          ")");
    }
    max_label = std::max(max_label, label);
    dataset.labels.push_back(label);
    for (int64_t j = 0; j < num_fields; ++j) {
      if (j == label_column) continue;
      float value = 0;
      if (!ParseNumber(fields[j], &value) || !std::isfinite(value)) {
        return InvalidArgument(at() + column(j) + ": '" + std::string(fields[j]) +
                               "' is not a finite number");
      }
      dataset.features.push_back(value);
    }
    ++dataset.size;
  }
  if (in.bad()) return DataLoss(path + ": read failed");
  if (dataset.size == 0) return InvalidArgument(path + ": no data rows");
  dataset.num_classes = options.num_classes > 0 ? options.num_classes : max_label + 1;
  dataset.example_shape = InputShape(dataset.feature_dim);
  return dataset;
}

}  // namespace pst

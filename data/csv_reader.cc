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

// A read in progress: where it is, and what the header and the first row
// fixed.
struct CsvRead {
  std::string path;
  int64_t line_number = 0;
  std::vector<std::string> names;  // the header's, when there is one
  int64_t first_row_line = 0;      // 0 before the first row
  int64_t num_fields = 0;          // the first row's: every row's
  int label_column = 0;
  int32_t max_label = -1;

  // "PATH:LINE: ", for errors.
  std::string At() const { return path + ":" + std::to_string(line_number) + ": "; }
  // "column J" (1-based), with its header name when there is one.
  std::string Column(size_t j) const {
    std::string text = "column " + std::to_string(j + 1);
    if (j < names.size()) text += " ('" + names[j] + "')";
    return text;
  }
};

// Checks that the row `fields` has as many fields as the first; the first
// row fixes that number, the label column and the dataset's feature_dim.
Status CheckRowLength(const std::vector<std::string_view>& fields, const CsvOptions& options,
                      CsvRead* read, Dataset* dataset) {
  if (read->first_row_line == 0) {
    read->num_fields = static_cast<int64_t>(fields.size());
    if (read->num_fields < 2) {
      return InvalidArgument(read->At() +
                             "expected a label and at least one feature, found 1 field");
    }
    read->label_column = options.label_column < 0 ? read->num_fields - 1 : options.label_column;
    if (read->label_column >= read->num_fields) {
      return InvalidArgument(read->At() + "label column " + std::to_string(options.label_column) +
                             " is beyond the row's " + std::to_string(read->num_fields) +
                             " columns");
    }
    read->first_row_line = read->line_number;
    dataset->feature_dim = read->num_fields - 1;
  } else if (static_cast<int64_t>(fields.size()) != read->num_fields) {
    return InvalidArgument(read->At() + "row has " + std::to_string(fields.size()) +
                           " fields, but the first row (line " +
                           std::to_string(read->first_row_line) + ") has " +
                           std::to_string(read->num_fields));
  }
  return Status::OK();
}

// Appends the row `fields` to *dataset: its label (an integer >= 0, below
// num_classes when that is set) and its features (finite numbers).
Status AppendRow(const std::vector<std::string_view>& fields, const CsvOptions& options,
                 CsvRead* read, Dataset* dataset) {
  int32_t label = 0;
  const std::string_view label_field = fields[read->label_column];
  if (!ParseNumber(label_field, &label)) {
    return InvalidArgument(read->At() + read->Column(read->label_column) + ": label '" +
                           std::string(label_field) + "' is not an integer");
  }
  if (label < 0 || (options.num_classes > 0 && label >= options.num_classes)) {
    return InvalidArgument(
        read->At() + read->Column(read->label_column) + ": label " + std::to_string(label) +
        " is outside [0, " +
        (options.num_classes > 0 ? std::to_string(options.num_classes) : std::string("inf")) + ")");
  }
  read->max_label = std::max(read->max_label, label);
  dataset->labels.push_back(label);
  for (int64_t j = 0; j < read->num_fields; ++j) {
    if (j == read->label_column) continue;
    float value = 0;
    if (!ParseNumber(fields[j], &value) || !std::isfinite(value)) {
      return InvalidArgument(read->At() + read->Column(j) + ": '" + std::string(fields[j]) +
                             "' is not a finite number");
    }
    dataset->features.push_back(value);
  }
  ++dataset->size;
  return Status::OK();
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
  CsvRead read;
  read.path = path;
  std::string line;
  std::vector<std::string_view> fields;
  while (std::getline(in, line)) {
    ++read.line_number;
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (Trim(text).empty()) continue;
    SplitFields(text, &fields);
    const bool first = read.first_row_line == 0 && read.names.empty();
    if (first && IsHeader(fields)) {
      read.names.assign(fields.begin(), fields.end());
      continue;
    }
    PST_RETURN_IF_ERROR(CheckRowLength(fields, options, &read, &dataset));
    PST_RETURN_IF_ERROR(AppendRow(fields, options, &read, &dataset));
  }
  if (in.bad()) return DataLoss(path + ": read failed");
  if (dataset.size == 0) return InvalidArgument(path + ": no data rows");
  dataset.num_classes = options.num_classes > 0 ? options.num_classes : read.max_label + 1;
  dataset.example_shape = InputShape(dataset.feature_dim);
  return dataset;
}

}  // namespace pst

#include "data/libsvm_reader.h"

#include <cmath>

#include "common/parse_number.h"
#include "data/example_lines.h"
#include "data/text_lines.h"

namespace pst {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// The label as 0 or 1, or -1 when it is none of 0, 1, -1, +1.
int ParseLabel(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double value = 0;
  if (!ParseNumber(text, &value)) return -1;
  if (value == 1) return 1;
  if (value == 0 || value == -1) return 0;
  return -1;
}

// The Dataset of no examples yet.
Dataset EmptyLibsvmDataset() {
  Dataset dataset;
  dataset.feature_dim = 0;
  dataset.example_shape = InputShape(0);
  dataset.num_classes = 2;
  dataset.num_fields = 1;
  dataset.sparse_offsets = {0};
  return dataset;
}

// Appends the example of `line`, line `line_number` of `file` ("" for lines
// in memory), to *dataset; nothing for a line that is empty or a comment.
Status AppendLibsvmLine(const std::string& file, int64_t line_number, std::string_view line,
                        Dataset* dataset) {
  const size_t comment = line.find('#');
  if (comment != std::string_view::npos) line = line.substr(0, comment);
  const char* p = line.data();
  const char* const end = p + line.size();
  // The next space-separated token, empty at the end of the line.
  auto next = [&] {
    while (p != end && IsSpace(*p)) ++p;
    const char* begin = p;
    while (p != end && !IsSpace(*p)) ++p;
    return std::string_view(begin, p - begin);
  };
  const std::string_view label_token = next();
  if (label_token.empty()) return Status::OK();
  auto at = [&] { return LinePrefix(file, line_number); };
  const int label = ParseLabel(label_token);
  if (label < 0) {
    return InvalidArgument(at() + "label '" + std::string(label_token) + "' is not 0, 1, -1 or +1");
  }
  int token = 1;
  for (std::string_view pair = next(); !pair.empty(); pair = next()) {
    ++token;
    auto bad = [&](const std::string& why) {
      return InvalidArgument(at() + "token " + std::to_string(token) + " '" + std::string(pair) +
                             "': " + why);
    };
    const size_t colon = pair.find(':');
    if (colon == std::string_view::npos) return bad("expected index:value");
    const std::string_view index_text = pair.substr(0, colon);
    const std::string_view value_text = pair.substr(colon + 1);
    int64_t index = 0;
    if (!ParseNumber(index_text, &index) || index < 0) {
      return bad("index '" + std::string(index_text) + "' is not an integer >= 0");
    }
    float value = 0;
    if (!ParseNumber(value_text, &value) || !std::isfinite(value)) {
      return bad("value '" + std::string(value_text) + "' is not a finite number");
    }
    dataset->sparse_keys.push_back(index);
    dataset->sparse_fields.push_back(0);
    dataset->sparse_values.push_back(value);
  }
  dataset->labels.push_back(label);
  dataset->sparse_offsets.push_back(static_cast<int64_t>(dataset->sparse_keys.size()));
  ++dataset->size;
  return Status::OK();
}

}  // namespace

StatusOr<Dataset> ReadLibsvmDataset(const std::string& path) {
  Dataset dataset = EmptyLibsvmDataset();
  PST_RETURN_IF_ERROR(ForEachLine(path, [&](int64_t line_number, std::string_view line) {
    return AppendLibsvmLine(path, line_number, line, &dataset);
  }));
  if (dataset.size == 0) return InvalidArgument(path + ": no examples");
  return dataset;
}

StatusOr<Dataset> ParseLibsvmLines(const std::vector<std::string>& lines) {
  Dataset dataset = EmptyLibsvmDataset();
  PST_RETURN_IF_ERROR(AppendExampleLines(
      lines,
      [](int64_t line_number, std::string_view line, Dataset* d) {
        return AppendLibsvmLine("", line_number, line, d);
      },
      &dataset));
  return dataset;
}

}  // namespace pst

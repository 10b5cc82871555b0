#include "data/libsvm_reader.h"

#include <charconv>
#include <cmath>

#include "data/text_lines.h"

namespace pst {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// The label as 0 or 1, or -1 when it is none of 0, 1, -1, +1.
int ParseLabel(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double value = 0;
  const std::from_chars_result r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) return -1;
  if (value == 1) return 1;
  if (value == 0 || value == -1) return 0;
  return -1;
}

}  // namespace

StatusOr<Dataset> ReadLibsvmDataset(const std::string& path) {
  Dataset dataset;
  dataset.feature_dim = 0;
  dataset.example_shape = {0};
  dataset.num_classes = 2;
  dataset.num_fields = 1;
  dataset.sparse_offsets = {0};
  const Status status = ForEachLine(path, [&](int64_t line_number, std::string_view line) {
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
    auto at = [&] { return path + ":" + std::to_string(line_number) + ": "; };
    const int label = ParseLabel(label_token);
    if (label < 0) {
      return InvalidArgument(at() + "label '" + std::string(label_token) +
                             "' is not 0, 1, -1 or +1");
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
      const char* const index_end = pair.data() + colon;
      const char* const value_end = pair.data() + pair.size();
      int64_t index = 0;
      std::from_chars_result r = std::from_chars(pair.data(), index_end, index);
      if (colon == 0 || r.ec != std::errc() || r.ptr != index_end || index < 0) {
        return bad("index '" + std::string(pair.substr(0, colon)) + "' is not an integer >= 0");
      }
      float value = 0;
      r = std::from_chars(index_end + 1, value_end, value);
      if (index_end + 1 == value_end || r.ec != std::errc() || r.ptr != value_end ||
          !std::isfinite(value)) {
        return bad("value '" + std::string(pair.substr(colon + 1)) + "' is not a finite number");
      }
      dataset.sparse_keys.push_back(index);
      dataset.sparse_fields.push_back(0);
      dataset.sparse_values.push_back(value);
    }
    dataset.labels.push_back(label);
    dataset.sparse_offsets.push_back(static_cast<int64_t>(dataset.sparse_keys.size()));
    ++dataset.size;
    return Status::OK();
  });
  PST_RETURN_IF_ERROR(status);
  if (dataset.size == 0) return InvalidArgument(path + ": no examples");
  return dataset;
}

}  // namespace pst

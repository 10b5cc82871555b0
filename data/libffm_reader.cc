#include "data/libffm_reader.h"

#include <algorithm>
#include <cmath>

#include "common/parse_number.h"
#include "data/example_lines.h"
#include "data/text_lines.h"

namespace pst {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// The label as 0 or 1, or -1 when it is none of 0, 1, -1, +1 (the libsvm
// reader's rule).
int ParseLabel(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  double value = 0;
  if (!ParseNumber(text, &value)) return -1;
  if (value == 1) return 1;
  if (value == 0 || value == -1) return 0;
  return -1;
}

}  // namespace

int64_t LibffmKey(int field, int64_t id) {
  CHECK(field >= 0 && field <= kLibffmMaxField) << "field " << field;
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64's offset basis
  const uint32_t f = static_cast<uint32_t>(field);
  for (int i = 0; i < 4; ++i) h = (h ^ ((f >> (8 * i)) & 0xff)) * kPrime;
  const uint64_t k = static_cast<uint64_t>(id);
  for (int i = 0; i < 8; ++i) h = (h ^ ((k >> (8 * i)) & 0xff)) * kPrime;
  // splitmix64's finalizer: every input bit reaches every output bit.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<int64_t>(h ^ (h >> 31));
}

namespace {

// The Dataset of no examples yet; num_fields grows with the fields read.
Dataset EmptyLibffmDataset() {
  Dataset dataset;
  dataset.feature_dim = 0;
  dataset.example_shape = InputShape(0);
  dataset.num_classes = 2;
  dataset.num_fields = 0;
  dataset.sparse_offsets = {0};
  return dataset;
}

// Appends the example of `line`, line `line_number` of `file` ("" for lines
// in memory), to *dataset; nothing for a line that is empty or a comment.
// num_fields becomes at least 1 + each field read.
Status AppendLibffmLine(const std::string& file, int64_t line_number, std::string_view line,
                        bool field_aware_keys, Dataset* dataset) {
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
  for (std::string_view triple = next(); !triple.empty(); triple = next()) {
    ++token;
    auto bad = [&](const std::string& why) {
      return InvalidArgument(at() + "token " + std::to_string(token) + " '" + std::string(triple) +
                             "': " + why);
    };
    const size_t first = triple.find(':');
    const size_t second = first == std::string_view::npos ? first : triple.find(':', first + 1);
    if (second == std::string_view::npos) return bad("expected field:id:value");
    const std::string_view field_text = triple.substr(0, first);
    const std::string_view id_text = triple.substr(first + 1, second - first - 1);
    const std::string_view value_text = triple.substr(second + 1);
    int field = 0;
    if (!ParseNumber(field_text, &field) || field < 0 || field > kLibffmMaxField) {
      return bad("field '" + std::string(field_text) + "' is not an integer in [0, " +
                 std::to_string(kLibffmMaxField) + "]");
    }
    int64_t id = 0;
    if (!ParseNumber(id_text, &id) || id < 0) {
      return bad("id '" + std::string(id_text) + "' is not an integer >= 0");
    }
    float value = 0;
    if (!ParseNumber(value_text, &value) || !std::isfinite(value)) {
      return bad("value '" + std::string(value_text) + "' is not a finite number");
    }
    dataset->num_fields = std::max(dataset->num_fields, field + 1);
    dataset->sparse_keys.push_back(field_aware_keys ? LibffmKey(field, id) : id);
    dataset->sparse_fields.push_back(field);
    dataset->sparse_values.push_back(value);
  }
  dataset->labels.push_back(label);
  dataset->sparse_offsets.push_back(static_cast<int64_t>(dataset->sparse_keys.size()));
  ++dataset->size;
  return Status::OK();
}

}  // namespace

StatusOr<Dataset> ReadLibffmDataset(const std::string& path, bool field_aware_keys) {
  Dataset dataset = EmptyLibffmDataset();
  PST_RETURN_IF_ERROR(ForEachLine(path, [&](int64_t line_number, std::string_view line) {
    return AppendLibffmLine(path, line_number, line, field_aware_keys, &dataset);
  }));
  if (dataset.size == 0) return InvalidArgument(path + ": no examples");
  // A file whose examples have no entries at all still has one (empty) field:
  // a click model needs at least one.
  dataset.num_fields = std::max(1, dataset.num_fields);
  return dataset;
}

StatusOr<Dataset> ParseLibffmLines(const std::vector<std::string>& lines, bool field_aware_keys) {
  Dataset dataset = EmptyLibffmDataset();
  PST_RETURN_IF_ERROR(AppendExampleLines(
      lines,
      [field_aware_keys](int64_t line_number, std::string_view line, Dataset* d) {
        return AppendLibffmLine("", line_number, line, field_aware_keys, d);
      },
      &dataset));
  dataset.num_fields = std::max(1, dataset.num_fields);  // as a file's
  return dataset;
}

}  // namespace pst

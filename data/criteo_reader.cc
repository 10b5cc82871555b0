#include "data/criteo_reader.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/parse_number.h"
#include "data/example_lines.h"
#include "data/text_lines.h"

namespace pst {
namespace {

constexpr int kFields = 1 + kCriteoIntegerFeatures + kCriteoCategoricalFields;  // 40

// A field's text for an error message, cut short: a log line can be long.
std::string Quote(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMax)) + "...'";
}

// Column `column` (0-based) by its 1-based number and Criteo's name.
std::string Column(int column) {
  std::string name;
  if (column == 0) {
    name = "label";
  } else if (column <= kCriteoIntegerFeatures) {
    name = "I" + std::to_string(column);
  } else {
    name = "C" + std::to_string(column - kCriteoIntegerFeatures);
  }
  return "column " + std::to_string(column + 1) + " (" + name + ")";
}

// The dense transform: log(1 + x), negative and missing as 0.
float Transform(int64_t x) { return x > 0 ? static_cast<float>(std::log1p(double(x))) : 0.0f; }

}  // namespace

std::string CriteoIntegerBucket(std::string_view field, int64_t x) {
  if (field.empty()) return "";
  if (x < 0) return "neg";
  return std::to_string(static_cast<int64_t>(std::floor(4 * std::log1p(double(x)))));
}

int64_t CriteoKey(int field, std::string_view value) {
  CHECK(field >= 0 && field < 256) << "field " << field;
  constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64's offset basis
  h = (h ^ static_cast<uint8_t>(field)) * kPrime;
  for (const char c : value) h = (h ^ static_cast<uint8_t>(c)) * kPrime;
  // splitmix64's finalizer: every input bit reaches every output bit.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<int64_t>(h ^ (h >> 31));
}

namespace {

// The Dataset of no examples yet, shaped as the options say.
Dataset EmptyCriteoDataset(const CriteoOptions& options) {
  Dataset dataset;
  dataset.feature_dim = kCriteoIntegerFeatures;
  dataset.example_shape = InputShape(kCriteoIntegerFeatures);
  dataset.num_classes = 2;
  dataset.num_fields =
      options.integer_fields ? kCriteoFieldsWithIntegers : kCriteoCategoricalFields;
  dataset.sparse_offsets = {0};
  return dataset;
}

// Appends the example of a non-empty `line`, line `line_number` of `file`
// ("" for lines in memory), to *dataset.
Status AppendCriteoLine(const std::string& file, int64_t line_number, std::string_view line,
                        const CriteoOptions& options, Dataset* dataset) {
  auto at = [&](int column) { return LinePrefix(file, line_number) + Column(column) + ": "; };
  const int64_t fields = std::count(line.begin(), line.end(), '\t') + 1;
  if (fields != kFields) {
    return InvalidArgument(LinePrefix(file, line_number) + "line has " + std::to_string(fields) +
                           " tab-separated fields, expected " + std::to_string(kFields) +
                           " (label, I1..I13, C1..C26)" +
                           (fields == kFields - 1
                                ? "; a file without labels (Kaggle's test.txt) cannot be read"
                                : ""));
  }
  const char* p = line.data();
  const char* const end = p + line.size();
  // The next field (the line has exactly kFields, counted above).
  auto next = [&] {
    const char* tab = static_cast<const char*>(std::memchr(p, '\t', end - p));
    if (tab == nullptr) tab = end;
    const std::string_view field(p, tab - p);
    p = tab == end ? end : tab + 1;
    return field;
  };
  const std::string_view label = next();
  if (label != "0" && label != "1") {
    return InvalidArgument(at(0) + Quote(label) + " is not 0 or 1");
  }
  float dense[kCriteoIntegerFeatures];
  int64_t bucket_keys[kCriteoIntegerFeatures];
  for (int j = 0; j < kCriteoIntegerFeatures; ++j) {
    const std::string_view field = next();
    int64_t x = 0;
    if (!field.empty() && !ParseNumber(field, &x)) {
      return InvalidArgument(at(1 + j) + Quote(field) + " is not a 64-bit integer");
    }
    dense[j] = Transform(x);
    if (options.integer_fields) {
      bucket_keys[j] = CriteoKey(kCriteoCategoricalFields + j, CriteoIntegerBucket(field, x));
    }
  }
  dataset->labels.push_back(label[0] - '0');
  dataset->features.insert(dataset->features.end(), dense, dense + kCriteoIntegerFeatures);
  for (int f = 0; f < kCriteoCategoricalFields; ++f) {
    dataset->sparse_keys.push_back(CriteoKey(f, next()));
    dataset->sparse_fields.push_back(f);
  }
  if (options.integer_fields) {
    for (int j = 0; j < kCriteoIntegerFeatures; ++j) {
      dataset->sparse_keys.push_back(bucket_keys[j]);
      dataset->sparse_fields.push_back(kCriteoCategoricalFields + j);
    }
  }
  dataset->sparse_values.resize(dataset->sparse_keys.size(), 1.0f);
  dataset->sparse_offsets.push_back(static_cast<int64_t>(dataset->sparse_keys.size()));
  ++dataset->size;
  return Status::OK();
}

}  // namespace

StatusOr<Dataset> ReadCriteoDataset(const std::string& path, const CriteoOptions& options) {
  Dataset dataset = EmptyCriteoDataset(options);
  PST_RETURN_IF_ERROR(ForEachLine(path, [&](int64_t line_number, std::string_view line) {
    if (line.empty()) return Status::OK();
    return AppendCriteoLine(path, line_number, line, options, &dataset);
  }));
  if (dataset.size == 0) return InvalidArgument(path + ": no examples");
  return dataset;
}

StatusOr<Dataset> ParseCriteoLines(const std::vector<std::string>& lines,
                                   const CriteoOptions& options) {
  Dataset dataset = EmptyCriteoDataset(options);
  PST_RETURN_IF_ERROR(AppendExampleLines(
      lines,
      [&options](int64_t line_number, std::string_view line, Dataset* d) {
        if (line.empty()) return Status::OK();  // no example: AppendExampleLines says so
        return AppendCriteoLine("", line_number, line, options, d);
      },
      &dataset));
  return dataset;
}

}  // namespace pst

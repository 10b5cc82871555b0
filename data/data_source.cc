#include "data/data_source.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "common/split.h"
#include "data/criteo_reader.h"
#include "data/csv_reader.h"
#include "data/idx_reader.h"
#include "data/libffm_reader.h"
#include "data/libsvm_reader.h"
#include "data/records_reader.h"
#include "data/standardize.h"
#include "data/validation_split.h"

namespace pst {
namespace {

// The same for every task and run: the split is part of the job.
constexpr uint64_t kValidationSeed = 0x5eed5eedULL;

// Reads one split of a format. `num_classes`: the training set's for the
// test set (its labels must fit), else the flag's (0: from the labels).
using SplitReader =
    std::function<StatusOr<Dataset>(const DataOptions& options, bool train, int num_classes)>;

// The non-empty entries of a comma-separated list.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  for (std::string& item : SplitCommas(text)) {
    if (!item.empty()) items.push_back(std::move(item));
  }
  return items;
}

StatusOr<std::string> SplitFile(const DataOptions& o, bool train) {
  const std::string& file = train ? o.train_file : o.test_file;
  if (file.empty()) {
    return InvalidArgument(o.format + " data needs a " + (train ? "training" : "test") +
                           " file; none is given");
  }
  return file;
}

StatusOr<Dataset> ReadMnist(const DataOptions& o, bool train, int /*num_classes*/) {
  return LoadMnist(o.data_dir, train);
}

StatusOr<Dataset> ReadCsv(const DataOptions& o, bool train, int num_classes) {
  PST_ASSIGN_OR_RETURN(std::string file, SplitFile(o, train));
  return ReadCsvDataset(file, CsvOptions{o.label_column, num_classes});
}

// The binary formats (criteo, libsvm): labels 0/1, so 2 classes.
Status CheckTwoClasses(const DataOptions& o, int num_classes) {
  if (num_classes != 0 && num_classes != 2) {
    return InvalidArgument(o.format + " data has 2 classes (labels 0/1), not " +
                           std::to_string(num_classes));
  }
  return Status::OK();
}

// With feature columns the file decides which integers are fields.
CriteoOptions CriteoOptionsOf(const DataOptions& o) {
  return CriteoOptions{o.criteo_integer_fields && !o.features};
}

StatusOr<Dataset> ReadCriteo(const DataOptions& o, bool train, int num_classes) {
  PST_RETURN_IF_ERROR(CheckTwoClasses(o, num_classes));
  PST_ASSIGN_OR_RETURN(std::string file, SplitFile(o, train));
  return ReadCriteoDataset(file, CriteoOptionsOf(o));
}

StatusOr<Dataset> ReadLibsvm(const DataOptions& o, bool train, int num_classes) {
  PST_RETURN_IF_ERROR(CheckTwoClasses(o, num_classes));
  PST_ASSIGN_OR_RETURN(std::string file, SplitFile(o, train));
  return ReadLibsvmDataset(file);
}

// With feature columns the keys are the ids: the columns' tables make them
// field-aware (or shared between fields).
StatusOr<Dataset> ReadLibffm(const DataOptions& o, bool train, int num_classes) {
  PST_RETURN_IF_ERROR(CheckTwoClasses(o, num_classes));
  PST_ASSIGN_OR_RETURN(std::string file, SplitFile(o, train));
  PST_ASSIGN_OR_RETURN(Dataset d, ReadLibffmDataset(file, !o.features.has_value()));
  d.num_fields = std::max(d.num_fields, o.min_fields);
  return d;
}

// ParseTestLines' readers: the click-log formats on lines in memory, with
// the options their file readers above take.
StatusOr<Dataset> ParseLines(const DataOptions& o, const std::vector<std::string>& lines) {
  if (o.format == "criteo") return ParseCriteoLines(lines, CriteoOptionsOf(o));
  if (o.format == "libsvm") return ParseLibsvmLines(lines);
  if (o.format == "libffm") {
    PST_ASSIGN_OR_RETURN(Dataset d, ParseLibffmLines(lines, !o.features.has_value()));
    d.num_fields = std::max(d.num_fields, o.min_fields);
    return d;
  }
  return InvalidArgument("format '" + o.format +
                         "' is read from files only; lines may be criteo, libsvm or libffm");
}

// CIFAR-10's binary files in data_dir when no file is given.
StatusOr<Dataset> ReadRecords(const DataOptions& o, bool train, int num_classes) {
  std::vector<std::string> files;
  if (!(train ? o.train_file : o.test_file).empty()) {
    files = SplitList(train ? o.train_file : o.test_file);
  } else if (!o.data_dir.empty()) {
    if (train) {
      for (int i = 1; i <= 5; ++i) {
        files.push_back(o.data_dir + "/data_batch_" + std::to_string(i) + ".bin");
      }
    } else {
      files.push_back(o.data_dir + "/test_batch.bin");
    }
  } else {
    return SplitFile(o, train).status();
  }
  RecordsOptions records;
  if (o.input_shape) records.image = *o.input_shape;
  records.label_bytes = o.label_bytes;
  records.dtype = o.record_dtype;
  records.num_classes = num_classes;
  return ReadRecordsDataset(files, records);
}

const std::map<std::string, SplitReader>& Readers() {
  static const auto* readers = new std::map<std::string, SplitReader>{
      {"mnist", ReadMnist},   {"csv", ReadCsv},       {"records", ReadRecords},
      {"criteo", ReadCriteo}, {"libsvm", ReadLibsvm}, {"libffm", ReadLibffm},
  };
  return *readers;
}

StatusOr<const SplitReader*> FindReader(const std::string& format) {
  const auto reader = Readers().find(format);
  if (reader != Readers().end()) return &reader->second;
  std::string known;
  for (const auto& [name, unused] : Readers()) known += (known.empty() ? "" : ", ") + name;
  return InvalidArgument("unknown data format '" + format + "'; known: " + known);
}

// The test set as read, transformed by the feature columns, if any.
StatusOr<Dataset> FinishTestSet(const DataOptions& options, int num_classes, Dataset test) {
  if (options.features) {
    PST_ASSIGN_OR_RETURN(test, ApplyFeatureColumns(*options.features, test));
  }
  test.num_classes = num_classes;
  return test;
}

std::string ShapeOf(const Dataset& d) {
  std::string shape = d.example_shape.ToString();
  if (d.num_fields > 0) shape += " and " + std::to_string(d.num_fields) + " sparse field(s)";
  return shape;
}

}  // namespace

std::vector<std::string> DataFormats() {
  std::vector<std::string> names;
  for (const auto& [name, reader] : Readers()) names.push_back(name);
  return names;
}

StatusOr<DataSplits> LoadData(const DataOptions& options, bool with_test) {
  PST_ASSIGN_OR_RETURN(const SplitReader* reader, FindReader(options.format));
  DataSplits splits;
  PST_ASSIGN_OR_RETURN(splits.train, (*reader)(options, true, options.num_classes));
  if (splits.train.num_classes < 2) {
    return InvalidArgument("the training set has " + std::to_string(splits.train.num_classes) +
                           " class(es); a classifier needs at least 2");
  }
  if (with_test) {
    PST_ASSIGN_OR_RETURN(splits.test, (*reader)(options, false, splits.train.num_classes));
    if (options.format == "libffm") {  // the fields either file reaches
      const int fields = std::max(splits.train.num_fields, splits.test.num_fields);
      splits.train.num_fields = splits.test.num_fields = fields;
    }
  }
  if (options.features) {
    PST_ASSIGN_OR_RETURN(splits.train, ApplyFeatureColumns(*options.features, splits.train));
    if (with_test) {
      PST_ASSIGN_OR_RETURN(splits.test, ApplyFeatureColumns(*options.features, splits.test));
    }
  }
  if (options.validation_examples > 0) {
    PST_ASSIGN_OR_RETURN(
        splits.validation,
        SplitValidation(&splits.train, options.validation_examples, kValidationSeed));
  }
  if (with_test) {
    if (splits.test.feature_dim != splits.train.feature_dim ||
        !(splits.test.example_shape == splits.train.example_shape) ||
        splits.test.num_fields != splits.train.num_fields) {
      return InvalidArgument("the test set's examples (" + ShapeOf(splits.test) +
                             ") differ from the training set's (" + ShapeOf(splits.train) + ")");
    }
    splits.test.num_classes = splits.train.num_classes;
  }
  if (options.normalize) {
    splits.standardization = FitStandardization(splits.train);
    for (Dataset* d : {&splits.train, &splits.validation, &splits.test}) {
      Standardize(*splits.standardization, d);
    }
  }
  return splits;
}

StatusOr<Dataset> LoadTestSet(const DataOptions& options, int num_classes) {
  PST_ASSIGN_OR_RETURN(const SplitReader* reader, FindReader(options.format));
  PST_ASSIGN_OR_RETURN(Dataset test, (*reader)(options, false, num_classes));
  return FinishTestSet(options, num_classes, std::move(test));
}

StatusOr<Dataset> ParseTestLines(const DataOptions& options, const std::vector<std::string>& lines,
                                 int num_classes) {
  PST_RETURN_IF_ERROR(CheckTwoClasses(options, num_classes));
  PST_ASSIGN_OR_RETURN(Dataset test, ParseLines(options, lines));
  return FinishTestSet(options, num_classes, std::move(test));
}

}  // namespace pst

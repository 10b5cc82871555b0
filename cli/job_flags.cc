#include "cli/job_flags.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/flags.h"
#include "common/parse_number.h"
#include "common/split.h"
#include "data/feature_columns.h"
#include "data/records_reader.h"
#include "model/ctr/ctr_spec.h"
#include "model/zoo/model_spec.h"
#include "model/zoo/model_zoo.h"

DECLARE_string(model);
DECLARE_string(model_spec);
DECLARE_string(dataset);
DECLARE_string(features);
DECLARE_string(data_dir);
DECLARE_string(train_file);
DECLARE_string(train_files);
DECLARE_bool(follow);
DECLARE_string(mode);
DECLARE_string(test_file);
DECLARE_int32(label_column);
DECLARE_int32(num_classes);
DECLARE_string(input_shape);
DECLARE_int32(label_bytes);
DECLARE_string(record_dtype);
DECLARE_bool(criteo_integer_fields);
DECLARE_bool(normalize);
DECLARE_int64(validation_examples);
DECLARE_int64(embedding_rows);
DECLARE_int64(embedding_capacity);

namespace pst {
namespace {

std::string DataDir() {
  if (!FLAGS_data_dir.empty()) return FLAGS_data_dir;
  const char* env = std::getenv("MNIST_DIR");
  return env ? env : "";
}

// --dataset names one of the readers.
Status CheckDataset(const std::string& format) {
  const std::vector<std::string> formats = DataFormats();
  if (std::find(formats.begin(), formats.end(), format) != formats.end()) return Status::OK();
  std::string known;
  for (const std::string& name : formats) known += (known.empty() ? "" : ", ") + name;
  return InvalidArgument("unknown --dataset=" + format + "; known: " + known);
}

Status CheckSpec(const std::string& text, const std::string& path) {
  if (IsClickSpec(text)) return ParseClickSpec(text, path).status();
  return ParseModelSpec(text, path).status();
}

// --input_shape: "32,32,3" is a 32x32 image of 3 channels, "20" 20 plain
// features; empty: unset.
StatusOr<std::optional<InputShape>> ParseInputShape(const std::string& text) {
  if (text.empty()) return std::optional<InputShape>();
  std::vector<int64_t> dims;
  for (const std::string& item : SplitCommas(text)) {
    int64_t d = 0;
    if (!ParseNumber(item, &d) || d < 1) {
      return InvalidArgument("--input_shape=" + text + ": '" + item +
                             "' is not a positive whole number; expected H,W,C or D");
    }
    dims.push_back(d);
  }
  if (dims.size() != 3 && dims.size() != 1) {
    return InvalidArgument("--input_shape=" + text + ": expected H,W,C or D");
  }
  return std::optional<InputShape>(InputShape(std::move(dims)));
}

// --follow and --train_files (docs/STREAMING.md): into d.train_files.
Status StreamFromFlags(DataOptions* d) {
  if (!FLAGS_follow) {
    if (!FLAGS_train_files.empty()) {
      return InvalidArgument(
          "--train_files needs --follow (files that stream in); a fixed training set is "
          "--train_file");
    }
    return Status::OK();
  }
  if (FLAGS_train_files.empty()) {
    return InvalidArgument("--follow needs --train_files, the pattern of the files to follow");
  }
  if (!FLAGS_train_file.empty()) {
    return InvalidArgument(
        "--follow trains the files of --train_files; leave --train_file out (the first of "
        "them gives the job its shape)");
  }
  if (d->format != "criteo" && d->format != "libsvm" && d->format != "libffm") {
    return InvalidArgument("--follow reads click logs: --dataset=criteo, libsvm or libffm, not " +
                           d->format);
  }
  if (FLAGS_mode != "async") {
    return InvalidArgument(
        "--follow trains in --mode=async (each file's batches once on every "
        "shard, as they come), not --mode=" +
        FLAGS_mode);
  }
  if (d->validation_examples > 0) {
    return InvalidArgument(
        "--follow measures each file before training on it (progressive validation); "
        "--validation_examples does not apply");
  }
  d->train_files = FLAGS_train_files;
  return Status::OK();
}

// The files a data format read from files needs (the library's own check
// cannot name the flags). CIFAR-10's records default to --data_dir's files.
Status CheckDataFiles(const DataOptions& d, DataSets reads) {
  if (d.format == "mnist" || (d.format == "records" && !d.data_dir.empty())) return Status::OK();
  if (reads != DataSets::kTest && d.train_file.empty() && d.train_files.empty()) {
    return InvalidArgument("--dataset=" + d.format + " needs --train_file");
  }
  if (reads != DataSets::kTraining && d.test_file.empty()) {
    return InvalidArgument("--dataset=" + d.format + " needs --test_file (the test set)");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::optional<FeatureColumns>> FeaturesFromFlags() {
  if (FLAGS_features.empty()) return std::optional<FeatureColumns>();
  StatusOr<FeatureColumns> columns = ReadFeatureColumns(FLAGS_features, FLAGS_dataset);
  if (!columns.ok()) return InvalidArgument("--features: " + columns.status().message());
  const FeatureSummary& s = columns->summary;
  if (FlagGiven("embedding_rows") && s.table_rows > 0 && FLAGS_embedding_rows != s.table_rows) {
    return InvalidArgument("--embedding_rows=" + std::to_string(FLAGS_embedding_rows) +
                           " differs from the " + std::to_string(s.table_rows) +
                           " rows of --features=" + FLAGS_features +
                           "'s tables; leave --embedding_rows out");
  }
  return std::optional<FeatureColumns>(std::move(columns).value());
}

StatusOr<JobOptions> JobFromFlags(DataSets reads) {
  JobOptions job;
  job.model = FLAGS_model;
  if (!FLAGS_model_spec.empty()) {
    if (FlagGiven("model")) return InvalidArgument("give --model or --model_spec, not both");
    std::ifstream in(FLAGS_model_spec);
    if (!in) return InvalidArgument("--model_spec=" + FLAGS_model_spec + ": cannot read the file");
    std::stringstream text;
    text << in.rdbuf();
    job.model = SpecModelName(text.str());
    // Parsed now, so a bad spec is a flag error naming the file and line.
    PST_RETURN_IF_ERROR(CheckSpec(text.str(), FLAGS_model_spec));
  }
  if (FLAGS_embedding_rows < 0) return InvalidArgument("--embedding_rows must be >= 0");
  if (FLAGS_embedding_capacity < 0) return InvalidArgument("--embedding_capacity must be >= 0");
  if (IsClickModel(job.model) && FLAGS_embedding_rows == 0 && FLAGS_embedding_capacity == 0) {
    return InvalidArgument("--embedding_rows=0 needs --embedding_capacity (dynamic tables)");
  }
  job.embedding_rows = FLAGS_embedding_rows;
  job.embedding_capacity = FLAGS_embedding_capacity;
  DataOptions& d = job.data;
  PST_RETURN_IF_ERROR(CheckDataset(FLAGS_dataset));
  d.format = FLAGS_dataset;
  d.data_dir = DataDir();
  d.train_file = FLAGS_train_file;
  d.test_file = FLAGS_test_file;
  d.label_column = FLAGS_label_column;
  if (FLAGS_num_classes < 0) return InvalidArgument("--num_classes must be >= 0");
  d.num_classes = FLAGS_num_classes;
  PST_ASSIGN_OR_RETURN(d.input_shape, ParseInputShape(FLAGS_input_shape));
  PST_RETURN_IF_ERROR(CheckPositiveFlag("label_bytes", FLAGS_label_bytes));
  d.label_bytes = FLAGS_label_bytes;
  StatusOr<RecordDtype> dtype = ParseRecordDtype(FLAGS_record_dtype);
  if (!dtype.ok()) return InvalidArgument("--record_dtype: " + dtype.status().message());
  d.record_dtype = *dtype;
  d.criteo_integer_fields = FLAGS_criteo_integer_fields;
  d.normalize = FLAGS_normalize;
  if (FLAGS_validation_examples < 0) return InvalidArgument("--validation_examples must be >= 0");
  d.validation_examples = FLAGS_validation_examples;
  if (d.format == "mnist" && d.data_dir.empty()) {
    return InvalidArgument(
        "--data_dir is empty and MNIST_DIR is not set: get MNIST with "
        "scripts/get_mnist.sh DIR, then pass --data_dir=DIR");
  }
  if (reads != DataSets::kTest) PST_RETURN_IF_ERROR(StreamFromFlags(&d));
  PST_RETURN_IF_ERROR(CheckDataFiles(d, reads));
  PST_ASSIGN_OR_RETURN(d.features, FeaturesFromFlags());
  return job;
}

}  // namespace pst

// Where a job's examples come from (--dataset and the flags beside it), and
// the splits a task gets from it: the training set less a seeded validation
// split, the validation split and the test set, standardized with the
// training split's statistics when asked.
//
// Formats, each with its reader in its own file and one line in the registry
// of data_source.cc:
//   mnist    IDX files in data_dir (MNIST, Fashion-MNIST, any image size)
//   csv      train_file / test_file; a label column, numeric features
//   records  fixed-length binary records (CIFAR-10's binary format), files
//            train_file / test_file (comma-separated lists), or CIFAR-10's
//            file names in data_dir
//   criteo   train_file / test_file; Criteo's click-log layout, 13 integer
//            and 26 categorical (hashed, sparse) features, plain or gzip;
//            the integers' buckets as 13 more sparse fields unless
//            criteo_integer_fields is false
//   libsvm   train_file / test_file; "label index:value ...", sparse only
//   libffm   train_file / test_file; "label field:id:value ...", sparse only,
//            num_fields = 1 + the largest field of the training and the
//            test file together (and at least min_fields)
// With `features` (--features, data/feature_columns.h; criteo, libffm and
// libsvm data) every split is transformed as it is read, before the
// validation split and the standardization: the splits are what the click
// model trains on. Without it the readers' Datasets are used as they are.
#ifndef PST_DATA_DATA_SOURCE_H_
#define PST_DATA_DATA_SOURCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/input_shape.h"
#include "common/status.h"
#include "data/dataset.h"
#include "data/feature_columns.h"
#include "data/records_reader.h"
#include "data/standardize.h"

namespace pst {

struct DataOptions {
  std::string format = "mnist";
  std::string data_dir;
  std::string train_file, test_file;
  // --follow (docs/STREAMING.md): the pattern (data/file_glob.h) whose files
  // stream in, each trained once as the chief hands it out; train_file is
  // then the first of them, which gives the job its shape.
  std::string train_files;
  int label_column = 0;                   // csv; -1: the last column
  int num_classes = 0;                    // csv, records; 0: from the training labels
  std::optional<InputShape> input_shape;  // records: H, W, C (or D); unset: CIFAR-10's
  int64_t label_bytes = 1;                // records
  // records: how each value is stored (bytes scaled to [0,1], or float32).
  RecordDtype record_dtype = RecordDtype::kUint8;
  // criteo without `features`: the integers' buckets as 13 more sparse
  // fields (data/criteo_reader.h). With `features` the file decides.
  bool criteo_integer_fields = true;
  bool normalize = false;           // per-feature, on the training split's statistics
  int64_t validation_examples = 0;  // held out of the training set
  // libffm: at least this many fields (predict: the model's, so a test file
  // that never reaches the last field still fits).
  int min_fields = 0;
  // --features: applied to every split (see above); unset: none.
  std::optional<FeatureColumns> features;
};

struct DataSplits {
  Dataset train, validation, test;  // validation empty without validation_examples
  // With DataOptions::normalize: what every split was standardized with.
  std::optional<Standardization> standardization;
};

// The format names, for --help and errors.
std::vector<std::string> DataFormats();

// Loads the training set (always: the validation split, the class count and
// the standardization come from it) and, with `with_test`, the test set.
// Errors: the readers'; InvalidArgument for an unknown format, a missing
// file, or a test set whose examples or labels do not fit the training
// set's, naming both sides.
StatusOr<DataSplits> LoadData(const DataOptions& options, bool with_test);

// The test set alone, its labels in [0, num_classes) (predict: the model
// file knows the classes and the standardization).
StatusOr<Dataset> LoadTestSet(const DataOptions& options, int num_classes);

// The same from `lines` in memory instead of test_file, one example a line
// (data/example_lines.h): the criteo, libsvm and libffm readers' own line
// code, then the feature columns. Errors name the line ("line 3: ...");
// InvalidArgument for another format.
StatusOr<Dataset> ParseTestLines(const DataOptions& options, const std::vector<std::string>& lines,
                                 int num_classes);

}  // namespace pst

#endif  // PST_DATA_DATA_SOURCE_H_

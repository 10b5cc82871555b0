#include "cli/job_flags.h"

#include <gflags/gflags.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/flags.h"
#include "model/ctr_spec.h"
#include "model/model_spec.h"
#include "model/model_zoo.h"

DECLARE_string(model);
DECLARE_string(model_spec);
DECLARE_string(dataset);
DECLARE_string(data_dir);
DECLARE_string(train_file);
DECLARE_string(test_file);
DECLARE_int32(label_column);
DECLARE_int32(num_classes);
DECLARE_string(input_shape);
DECLARE_int32(label_bytes);
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

Status CheckSpec(const std::string& text, const std::string& path) {
  if (IsClickSpec(text)) return ParseClickSpec(text, path).status();
  return ParseModelSpec(text, path).status();
}

// "32,32,3" -> {32, 32, 3}.
StatusOr<std::vector<int64_t>> ParseInputShape(const std::string& text) {
  std::vector<int64_t> dims;
  if (text.empty()) return dims;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || d < 1) {
      return InvalidArgument("--input_shape=" + text + ": expected H,W,C, positive numbers");
    }
    dims.push_back(d);
  }
  if (dims.size() != 3) return InvalidArgument("--input_shape=" + text + ": expected H,W,C");
  return dims;
}

}  // namespace

StatusOr<JobOptions> JobFromFlags() {
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
  job.embedding_rows = FLAGS_embedding_rows;
  job.embedding_capacity = FLAGS_embedding_capacity;
  DataOptions& d = job.data;
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
  d.normalize = FLAGS_normalize;
  if (FLAGS_validation_examples < 0) return InvalidArgument("--validation_examples must be >= 0");
  d.validation_examples = FLAGS_validation_examples;
  if (d.format == "mnist" && d.data_dir.empty()) {
    return InvalidArgument(
        "--data_dir is empty and MNIST_DIR is not set: get MNIST with "
        "scripts/get_mnist.sh DIR, then pass --data_dir=DIR");
  }
  return job;
}

}  // namespace pst

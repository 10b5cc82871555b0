#include "cli/predict_flags.h"

#include <gflags/gflags.h>

#include "cli/flags.h"
#include "cli/job_flags.h"

DECLARE_string(model_file);
DECLARE_string(output);
DECLARE_string(export_onnx);

namespace pst {

StatusOr<PredictOptions> PredictOptionsFromFlags() {
  PredictOptions o;
  if (FLAGS_model_file.empty())
    return InvalidArgument("--model_file is empty: give RUN_DIR/model.bin");
  o.model_file = FLAGS_model_file;
  o.output = FLAGS_output;
  o.export_onnx = FLAGS_export_onnx;
  o.predict = o.export_onnx.empty() || FlagGiven("dataset") || FlagGiven("data_dir") ||
              FlagGiven("test_file");
  if (!o.predict && !o.output.empty()) {
    return InvalidArgument(
        "--output needs a data set to predict: give --dataset, --data_dir "
        "or --test_file");
  }
  if (!o.predict) return o;  // only exporting: no data set to read
  PST_ASSIGN_OR_RETURN(JobOptions job, JobFromFlags());
  o.data = job.data;
  return o;
}

}  // namespace pst

#include "cli/predict_flags.h"

#include <gflags/gflags.h>

#include "cli/flags.h"
#include "cli/job_flags.h"
#include "common/split.h"

DECLARE_string(model_file);
DECLARE_string(export_dir);
DECLARE_int64(export_step);
DECLARE_string(output);
DECLARE_string(export_onnx);
DECLARE_string(ensemble);
DECLARE_string(device);

namespace pst {

bool EnsembleRequested() { return !FLAGS_ensemble.empty(); }

StatusOr<EnsembleOptions> EnsembleOptionsFromFlags() {
  EnsembleOptions o;
  if (!FLAGS_model_file.empty()) {
    return InvalidArgument("give --ensemble or --model_file, not both");
  }
  o.members = SplitCommas(FLAGS_ensemble);
  for (const std::string& member : o.members) {
    if (member.empty())
      return InvalidArgument("--ensemble=" + FLAGS_ensemble + " has an empty entry");
  }
  if (o.members.size() < 2) {
    return InvalidArgument("--ensemble=" + FLAGS_ensemble + " names one model; give two or more");
  }
  std::vector<std::string> devices = SplitCommas(FLAGS_device);
  if (devices.size() == 1) devices.assign(o.members.size(), devices[0]);
  if (devices.size() != o.members.size()) {
    return InvalidArgument("--device=" + FLAGS_device + " lists " + std::to_string(devices.size()) +
                           " devices for " + std::to_string(o.members.size()) +
                           " --ensemble members");
  }
  o.devices = devices;
  PST_ASSIGN_OR_RETURN(JobOptions job, JobFromFlags(DataSets::kTrainingAndTest));
  o.data = job.data;
  return o;
}

StatusOr<PredictOptions> PredictOptionsFromFlags() {
  PredictOptions o;
  if (!FLAGS_export_dir.empty() && !FLAGS_model_file.empty()) {
    return InvalidArgument("give --model_file or --export_dir, not both");
  }
  if (FLAGS_model_file.empty() && FLAGS_export_dir.empty())
    return InvalidArgument("--model_file is empty: give RUN_DIR/model.bin (or --export_dir)");
  if (FLAGS_export_step >= 0 && FLAGS_export_dir.empty()) {
    return InvalidArgument("--export_step needs --export_dir");
  }
  o.model_file = FLAGS_model_file;
  o.export_dir = FLAGS_export_dir;
  o.export_step = FLAGS_export_step;
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
  PST_ASSIGN_OR_RETURN(JobOptions job, JobFromFlags(DataSets::kTest));
  o.data = job.data;
  return o;
}

}  // namespace pst

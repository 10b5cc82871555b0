// predict: a trained model (a run's model.bin) on a data set.
#include <iostream>

#include "cli/flags.h"
#include "cli/predict_flags.h"

namespace {

// Says why the run failed; returns its exit status.
int Failed(const pst::Status& status) {
  LOG(ERROR) << status.ToString();
  return 1;
}

// Prints `report` (a PredictionReport or an EnsembleReport) and returns 0,
// or says why there is none.
template <typename Report>
int PrintReport(const pst::StatusOr<Report>& report) {
  if (!report.ok()) return Failed(report.status());
  std::cout << report->Format() << std::flush;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  pst::InitProgram(pst::Program::kPredict, &argc, &argv,
                   "predict --model_file=RUN_DIR/model.bin [--dataset=... and its flags] "
                   "[--output=FILE] [--export_onnx=FILE]: accuracy, per-class precision and "
                   "recall, the confusion matrix of a trained model on a data set's test "
                   "split; with --export_onnx, the model as ONNX; with --ensemble=M1,M2,... "
                   "instead of --model_file, the members' and their mean's accuracies");
  if (pst::EnsembleRequested()) {
    auto ensemble = pst::EnsembleOptionsFromFlags();
    if (!ensemble.ok()) return pst::ReportFlagError(ensemble.status());
    return PrintReport(pst::RunEnsemble(*ensemble));
  }
  auto options = pst::PredictOptionsFromFlags();
  if (!options.ok()) return pst::ReportFlagError(options.status());
  if (!options->export_onnx.empty()) {
    if (const pst::Status exported = pst::ExportOnnx(*options); !exported.ok()) {
      return Failed(exported);
    }
    std::cout << "ONNX model: " << options->export_onnx << "\n";
  }
  if (!options->predict) return 0;
  return PrintReport(pst::RunPredict(*options));
}

// predict: a trained model (a run's model.bin) on a data set.
#include <iostream>

#include "cli/flags.h"

int main(int argc, char** argv) {
  pst::InitProgram(pst::Program::kPredict, &argc, &argv,
                   "predict --model_file=RUN_DIR/model.bin [--dataset=... and its flags] "
                   "[--output=FILE]: accuracy, per-class precision and recall, the confusion "
                   "matrix of a trained model on a data set's test split");
  auto options = pst::PredictOptionsFromFlags();
  if (!options.ok()) return pst::ReportFlagError(options.status());
  const pst::StatusOr<pst::PredictionReport> report = pst::RunPredict(*options);
  if (!report.ok()) {
    LOG(ERROR) << report.status().ToString();
    return 1;
  }
  std::cout << report->Format() << std::flush;
  return 0;
}

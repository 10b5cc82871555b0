// predict's options from the flags: --model_file, --output, --export_onnx
// or --ensemble and --device, and the data set's flags (cli/job_flags.h). InvalidArgument names the
// bad flag. For main() only.
#ifndef PST_CLI_PREDICT_FLAGS_H_
#define PST_CLI_PREDICT_FLAGS_H_

#include "common/status.h"
#include "predict/ensemble.h"
#include "predict/predictor.h"

namespace pst {

StatusOr<PredictOptions> PredictOptionsFromFlags();

// --ensemble was given: predict runs EnsembleOptionsFromFlags instead.
bool EnsembleRequested();
// --ensemble's members, --device (one for all, or one per member) and the
// data set's flags.
StatusOr<EnsembleOptions> EnsembleOptionsFromFlags();

}  // namespace pst

#endif  // PST_CLI_PREDICT_FLAGS_H_

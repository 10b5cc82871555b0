// predict's options from the flags: --model_file, --output, --export_onnx
// and the data set's flags (cli/job_flags.h). InvalidArgument names the bad
// flag. For main() only.
#ifndef PST_CLI_PREDICT_FLAGS_H_
#define PST_CLI_PREDICT_FLAGS_H_

#include "common/status.h"
#include "predict/predictor.h"

namespace pst {

StatusOr<PredictOptions> PredictOptionsFromFlags();

}  // namespace pst

#endif  // PST_CLI_PREDICT_FLAGS_H_

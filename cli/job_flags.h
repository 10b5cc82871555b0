// The data and the model, as the chief, every worker and predict must see
// them: --model or --model_spec, --dataset and its flags. Shared by
// cli/worker_flags.cc, cli/chief_flags.cc and cli/predict_flags.cc; like
// them, read only on behalf of main().
#ifndef PST_CLI_JOB_FLAGS_H_
#define PST_CLI_JOB_FLAGS_H_

#include "common/status.h"
#include "job/job.h"

namespace pst {

// InvalidArgument names the bad flag; a --model_spec that does not parse is
// refused here, naming its file and line. --data_dir defaults to $MNIST_DIR.
StatusOr<JobOptions> JobFromFlags();

}  // namespace pst

#endif  // PST_CLI_JOB_FLAGS_H_

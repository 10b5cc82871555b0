// The data and the model, as the chief, every worker and predict must see
// them: --model or --model_spec, --dataset and its flags. Shared by
// cli/worker_flags.cc, cli/chief_flags.cc and cli/predict_flags.cc; like
// them, read only on behalf of main().
#ifndef PST_CLI_JOB_FLAGS_H_
#define PST_CLI_JOB_FLAGS_H_

#include "common/status.h"
#include "job/job.h"

namespace pst {

// The data sets a program reads: a worker its training set; the chief and an
// ensemble both (the validation split and the standardization come from the
// training set); predict with one model the test set only.
enum class DataSets { kTraining, kTrainingAndTest, kTest };

// InvalidArgument names the bad flag; a --model_spec that does not parse is
// refused here, naming its file and line. --data_dir defaults to $MNIST_DIR.
// A data format read from files needs the file of each set the caller reads.
StatusOr<JobOptions> JobFromFlags(DataSets reads);

}  // namespace pst

#endif  // PST_CLI_JOB_FLAGS_H_

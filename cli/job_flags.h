// The data and the model, as the chief, every worker and predict must see
// them: --model or --model_spec, --dataset and its flags. Shared by
// cli/worker_flags.cc, cli/chief_flags.cc and cli/predict_flags.cc; like
// them, read only on behalf of main().
#ifndef PST_CLI_JOB_FLAGS_H_
#define PST_CLI_JOB_FLAGS_H_

#include <optional>

#include "common/status.h"
#include "data/feature_columns.h"
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

// --features for --dataset: the parsed file, unset without the flag.
// InvalidArgument naming the flag for a file that cannot be read or parsed
// (naming its line and column), and an explicit --embedding_rows that
// differs from the file's hashed tables' rows (without the flag they are the
// file's business). Training with it needs a click model (LoadJob says so);
// predict takes the model from its model file.
StatusOr<std::optional<FeatureColumns>> FeaturesFromFlags();

}  // namespace pst

#endif  // PST_CLI_JOB_FLAGS_H_

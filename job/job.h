// Job: what a training run trains, built once from the flags and handed to
// the chief and to every worker: the data splits, the input shape and class
// count they imply, and the model's name. Every task of a run must describe
// the same job (Describe(), checked when a worker joins).
#ifndef PST_JOB_JOB_H_
#define PST_JOB_JOB_H_

#include <memory>
#include <optional>
#include <string>

#include "common/input_shape.h"
#include "common/status.h"
#include "data/data_source.h"
#include "data/feature_columns.h"
#include "kernels/kernels.h"
#include "model/ctr/ctr_model.h"
#include "model/model.h"

namespace pst {

struct JobOptions {
  DataOptions data;
  std::string model = "mlp";  // a zoo name, or SpecModelName(spec text)
  // Click models (model/ctr/ctr_spec.h): fixed embedding tables of this many
  // rows (hash buckets), or, with embedding_capacity > 0, dynamic tables
  // (any 64-bit key; the capacity is per table per ps). With feature
  // columns (data.features) the file's tables decide: embedding_rows is
  // ignored (cli/ refuses an explicit --embedding_rows that disagrees), and
  // dynamic tables need embedding_capacity, hashed ones refuse it.
  int64_t embedding_rows = 1000000;
  int64_t embedding_capacity = 0;
};

// A model's name for logs: the zoo name, or "spec-<hash of its text>".
std::string ModelLabel(const std::string& model);

struct Job {
  std::string dataset;  // the format
  std::string model;
  DataSplits data;
  InputShape input = 0;
  int num_classes = 0;
  // Click models: the data's sparse fields and the tables' rows (0: dynamic).
  bool click_model = false;
  int num_fields = 0;
  int64_t table_rows = 0;
  // --features (data/feature_columns.h): what the file makes of the click
  // model's config (ApplyFeatureSummary), the file's text and a hash of it
  // that Describe() shows, so every task must read the same file.
  std::optional<FeatureSummary> features;
  std::string features_text;  // the file's, for model.bin
  std::string features_hash;

  // "dataset=csv input=20 features classes=3 model=mlp_relu"; with feature
  // columns " features=<hash>" after the tables.
  std::string Describe() const;
};

// Loads the data (the test set with `with_test`: the chief evaluates) and
// checks that the model takes it; errors name both sides. With feature
// columns (options.data.features) the model must be a click model and the
// table flags fit the file's tables (CheckFeatureTables).
StatusOr<Job> LoadJob(const JobOptions& options, bool with_test);

// Sets `config` from a feature file's summary: its embedding dim (when the
// fields have one), else each field's dim (a column that states none takes
// the model's) and key range; when any column states a combiner, every
// field's (the others take the model's combiner). num_fields,
// dense_features and table_rows come from the transformed data and the job
// (LoadJob). InvalidArgument naming two columns when fields of different
// dims meet a model that needs one (fm, dlrm).
Status ApplyFeatureSummary(const FeatureSummary& summary, CtrModelConfig* config);

// InvalidArgument unless the table flags fit the feature file's tables:
// dynamic tables need embedding_capacity > 0, hashed ones refuse it.
Status CheckFeatureTables(const FeatureSummary& summary, const JobOptions& options);

// A click job's model config: ClickModelConfig for its model, data and
// tables, then ApplyFeatureSummary with the job's feature columns.
StatusOr<CtrModelConfig> JobClickModelConfig(const Job& job);

// The job's model on the CPU: a click model (model/ctr/ctr_model.h) or a zoo or
// spec model (model/zoo/model_zoo.h).
StatusOr<std::unique_ptr<Model>> MakeJobModel(const Job& job, const KernelsOptions& kernels = {});

}  // namespace pst

#endif  // PST_JOB_JOB_H_

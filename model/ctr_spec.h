// Click models by name: the zoo's "wide_deep", or a --model_spec whose
// layers start with an embedding line:
//
//   embedding 8 [combiner=sum|mean]   (the deep part's table, dim 8)
//   wide                              (optional: the wide part)
//   dense 64 relu                     (hidden layers, ReLU)
//   dense classes                     (the last layer: one logit)
//   learning_rate 0.05                (optional)
#ifndef PST_MODEL_CTR_SPEC_H_
#define PST_MODEL_CTR_SPEC_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "model/ctr_model.h"

namespace pst {

// Whether `name` (a zoo name, or SpecModelName(text)) is a click model.
bool IsClickModel(const std::string& name);
bool IsClickSpec(const std::string& spec_text);

// The click model's config for the data's dense features and fields, with
// fixed tables of `table_rows` rows (0: dynamic). InvalidArgument naming
// `source` and the line for a spec that does not parse.
StatusOr<CtrModelConfig> ClickModelConfig(const std::string& name, int64_t dense_features,
                                          int num_fields, int64_t table_rows);
StatusOr<CtrModelConfig> ParseClickSpec(const std::string& text, const std::string& source);

// The learning rate it trains well with (wide_deep: 0.05, with Adagrad);
// a spec's learning_rate line, else InvalidArgument.
StatusOr<float> ClickModelLearningRate(const std::string& name);

}  // namespace pst

#endif  // PST_MODEL_CTR_SPEC_H_

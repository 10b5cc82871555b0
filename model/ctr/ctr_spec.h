// Click models by name: the zoo's, or a --model_spec whose layers start
// with an embedding line. The zoo (dense features and fields from the data;
// each with the optimizer and rate it trains well with, see
// ClickModelTraining):
//
//   wide_deep  embedding 8, wide, MLP 64-32 (Cheng et al. 2016)
//   fm         embedding 16, wide, fm, one linear layer (Rendle 2010)
//   deepfm     embedding 16, wide, fm, MLP 256-128 (Guo et al. 2017)
//   dcn_v2     embedding 16, 3 full-rank cross layers stacked under an MLP
//              256-128 (Wang et al. 2021)
//   dlrm       embedding 16, bottom MLP 64-16 on the dense features, dot
//              interaction, top MLP 256-128 (Naumov et al. 2019)
//
// A spec, one part per line ('#' starts a comment):
//
//   embedding 16 [combiner=sum|mean|sqrtn]  (the field vectors' table, dim 16)
//   wide                              (the wide part: a weight per key)
//   fm                                (FM's pairwise term)
//   cross 3 [rank=64] [parallel]      (DCN-v2's cross layers)
//   dot                               (DLRM's dot interaction ...)
//   bottom 64 relu                    (... and its bottom layers; the last
//                                      has the embedding dim)
//   dense 256 relu                    (hidden layers, ReLU)
//   batchnorm                         (batch norm in every MLP)
//   dropout 0.2                       (dropout in every MLP)
//   dense classes                     (the last layer: one logit)
//   optimizer adam                    (optional: what it trains well with)
//   learning_rate 0.001               (optional)
#ifndef PST_MODEL_CTR_CTR_SPEC_H_
#define PST_MODEL_CTR_CTR_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/ctr/ctr_model.h"

namespace pst {

// The zoo's click models, in the order above.
std::vector<std::string> ClickModelNames();

// Whether `name` (a zoo name, or SpecModelName(text)) is a click model.
bool IsClickModel(const std::string& name);
bool IsClickSpec(const std::string& spec_text);

// The click model's config for the data's dense features and fields, with
// fixed tables of `table_rows` rows (0: dynamic). InvalidArgument naming
// `source` and the line for a spec that does not parse.
StatusOr<CtrModelConfig> ClickModelConfig(const std::string& name, int64_t dense_features,
                                          int num_fields, int64_t table_rows);
StatusOr<CtrModelConfig> ParseClickSpec(const std::string& text, const std::string& source);

// How a click model trains well: its optimizer (for rows and dense
// variables alike) and rate.
struct ClickTraining {
  std::string optimizer;
  float learning_rate = 0;
};
// The zoo's: adam 0.001 for every one; a spec's
// optimizer and learning_rate lines (without them: sgd, --optimizer's
// default, and ClickModelLearningRate's rate).
StatusOr<ClickTraining> ClickModelTraining(const std::string& name);
// The rate for `optimizer`: the model's own when it is the model's
// optimizer, else that optimizer's usual rate for click models (adam 0.001,
// adagrad, ftrl and sgd 0.05, momentum 0.01).
StatusOr<float> ClickModelLearningRate(const std::string& name, const std::string& optimizer);

}  // namespace pst

#endif  // PST_MODEL_CTR_CTR_SPEC_H_

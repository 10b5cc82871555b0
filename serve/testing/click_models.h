// Click models for the serve tests: a small wide_deep job on criteo lines,
// its parameters set to values that tell versions apart, as a TrainedModel,
// a ServedModel, a model.bin or the files of an export folder.
#ifndef PST_SERVE_TESTING_CLICK_MODELS_H_
#define PST_SERVE_TESTING_CLICK_MODELS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/tensor.h"
#include "job/job.h"
#include "job/model_file.h"
#include "serve/served_model.h"

namespace pst {

// `n` criteo lines (label, 13 integers, 26 categorical values), varied by
// line and by `seed`.
std::vector<std::string> CriteoLines(int n, int seed = 0);

// `n` libffm lines of fields 0..3: one id in fields 0 and 1, two or three
// in field 2, weighted ids in field 3 (weights with two decimals).
std::vector<std::string> LibffmLines(int n, int seed = 0);

// Writes `lines` to `path`, one a line.
void WriteLines(const std::string& path, const std::vector<std::string>& lines);

// A wide_deep job (tables of 50 rows) on the lines of `train_file` in
// `format` (criteo or libffm), through the feature file `features_file`
// when given. CHECKs it loads.
Job ClickJob(const std::string& train_file, const std::string& features_file = "",
             const std::string& format = "criteo");

// The job's model's parameters (its variables, then its whole tables):
// element i of each is ClickParamValue(k, i), small (|x| < 0.02 for k < 1)
// so that the probabilities stay well inside (0, 1) and differ with k.
std::vector<Tensor> ClickParams(const Job& job, float k);
float ClickParamValue(float k, int64_t i);

// The job's model with ClickParams(job, k).
TrainedModel ClickModel(const Job& job, float k);

// ClickModel(job, k) to serve, as of export step `step`.
std::unique_ptr<ServedModel> ServedClickModel(const Job& job, float k, int64_t step);

// Export files (job/export_files.h) in `dir`: a base at `step` with
// ClickParams(job, k); a delta at `step` after `previous` of base `base`
// with every dense variable and every table's row 0 at ClickParams(job, k)'s.
void WriteExportBase(const std::string& dir, int64_t step, const Job& job, float k);
void WriteExportDelta(const std::string& dir, int64_t step, int64_t base, int64_t previous,
                      const Job& job, float k);

}  // namespace pst

#endif  // PST_SERVE_TESTING_CLICK_MODELS_H_

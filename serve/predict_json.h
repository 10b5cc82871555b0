// The JSON of POST /predict (docs/SERVING.md):
//   request   {"format": "criteo" | "libsvm" | "libffm", "lines": ["...", ...]}
//             {"format": "fields", "examples": [{"name": value, ...}, ...]}
//             a value: null (the field empty), an integer, a string, or a
//             list of ids (integers >= 0) and [id, weight] pairs
//   answer    {"probabilities": [p, ...], "model_step": S, "base_step": B}
//   error     {"error": "..."}
// Other members of the request are ignored.
//
// Thread safety: functions only.
#ifndef PST_SERVE_PREDICT_JSON_H_
#define PST_SERVE_PREDICT_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "serve/named_fields.h"

namespace pst {

struct PredictRequest {
  std::string format;
  std::vector<std::string> lines;      // criteo, libsvm, libffm
  std::vector<NamedExample> examples;  // fields
};

// InvalidArgument saying what is wrong: malformed JSON (with the parser's
// place), no object, a member missing or of the wrong type (naming the
// first line that is no string, the first example that is no object, the
// example and field of a value of no field type), an unknown format, no
// lines or examples.
StatusOr<PredictRequest> ParsePredictRequest(std::string_view body);

// The answer: one probability a line, in order.
std::string PredictAnswerJson(const std::vector<float>& probabilities, int64_t model_step,
                              int64_t base_step);

// {"error": message}; bytes of `message` that are no UTF-8 become U+FFFD.
std::string ErrorJson(const std::string& message);

}  // namespace pst

#endif  // PST_SERVE_PREDICT_JSON_H_

#include "serve/predict_json.h"

#include <nlohmann/json.hpp>

namespace pst {
namespace {

using Json = nlohmann::json;

// The formats a click model reads (LoadedModel::ParseTestLines).
bool KnownFormat(const std::string& format) {
  return format == "criteo" || format == "libsvm" || format == "libffm";
}

// Error messages may quote a line cut short, in the middle of a UTF-8
// sequence: replaced rather than refused (dump's default would throw).
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

StatusOr<PredictRequest> ParsePredictRequest(std::string_view body) {
  // The parser is iterative, so deep nesting cannot exhaust the stack. Its
  // exception says where the JSON breaks; it ends here.
  Json json;
  try {
    json = Json::parse(body);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at ..."
    const size_t tag_end = what.find("] ");
    if (tag_end != std::string::npos) what.erase(0, tag_end + 2);
    return InvalidArgument("the body is not valid JSON: " + what);
  }
  if (!json.is_object()) {
    return InvalidArgument(std::string("the body is a JSON ") + json.type_name() +
                           ", not an object with \"format\" and \"lines\"");
  }
  const auto format = json.find("format");
  if (format == json.end()) return InvalidArgument("\"format\" is missing");
  if (!format->is_string()) {
    return InvalidArgument(std::string("\"format\" is a ") + format->type_name() +
                           ", not a string");
  }
  PredictRequest request;
  request.format = format->get<std::string>();
  if (!KnownFormat(request.format)) {
    return InvalidArgument("unknown format \"" + request.format +
                           "\": give criteo, libsvm or libffm");
  }
  const auto lines = json.find("lines");
  if (lines == json.end()) return InvalidArgument("\"lines\" is missing");
  if (!lines->is_array()) {
    return InvalidArgument(std::string("\"lines\" is a ") + lines->type_name() +
                           ", not an array of strings");
  }
  if (lines->empty()) return InvalidArgument("\"lines\" is empty: give one line or more");
  request.lines.reserve(lines->size());
  for (const Json& line : *lines) {
    if (!line.is_string()) {
      return InvalidArgument("line " + std::to_string(request.lines.size() + 1) + " is a " +
                             line.type_name() + ", not a string");
    }
    request.lines.push_back(line.get<std::string>());
  }
  return request;
}

std::string PredictAnswerJson(const std::vector<float>& probabilities, int64_t model_step,
                              int64_t base_step) {
  Json answer = Json::object();
  answer["probabilities"] = probabilities;
  answer["model_step"] = model_step;
  answer["base_step"] = base_step;
  return Dump(answer);
}

std::string ErrorJson(const std::string& message) { return Dump(Json{{"error", message}}); }

}  // namespace pst

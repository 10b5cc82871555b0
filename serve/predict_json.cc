#include "serve/predict_json.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace pst {
namespace {

using Json = nlohmann::json;

// Error messages may quote a line cut short, in the middle of a UTF-8
// sequence: replaced rather than refused (dump's default would throw).
std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The formats a click model reads (LoadedModel::ParseTestLines), and
// named fields (serve/named_fields.h).
bool KnownFormat(const std::string& format) {
  return format == "criteo" || format == "libsvm" || format == "libffm" || format == "fields";
}

// An entry of a list value: an id, or [id, weight].
StatusOr<FieldEntry> ParseEntry(const Json& json, const std::string& where) {
  const bool pair = json.is_array() && json.size() == 2;
  const Json& id = pair ? json[0] : json;
  if (id.is_number_integer() && id.get<int64_t>() >= 0 &&
      !(id.is_number_unsigned() && id.get<uint64_t>() > uint64_t(INT64_MAX))) {
    FieldEntry entry{id.get<int64_t>(), 1.0f};
    if (!pair) return entry;
    if (json[1].is_number()) {
      entry.weight = static_cast<float>(json[1].get<double>());
      if (std::isfinite(entry.weight)) return entry;
    }
    return InvalidArgument(where + "weight " + Dump(json[1]) + " is not a finite float");
  }
  return InvalidArgument(where + Dump(json) + " is no id (an integer >= 0) nor [id, weight]");
}

// A named field's value (serve/named_fields.h); `where` starts the errors.
StatusOr<FieldValue> ParseFieldValue(const Json& json, const std::string& where) {
  FieldValue value;
  if (json.is_null()) return value;
  if (json.is_string()) {
    value.type = FieldValue::Type::kString;
    value.text = json.get<std::string>();
    return value;
  }
  if (json.is_number_integer()) {
    if (json.is_number_unsigned() && json.get<uint64_t>() > uint64_t(INT64_MAX)) {
      return InvalidArgument(where + Dump(json) + " is over the largest 64-bit integer");
    }
    value.type = FieldValue::Type::kInteger;
    value.integer = json.get<int64_t>();
    return value;
  }
  if (json.is_array()) {
    value.type = FieldValue::Type::kEntries;
    for (const Json& entry : json) {
      PST_ASSIGN_OR_RETURN(
          FieldEntry e,
          ParseEntry(entry, where + "entry " + std::to_string(value.entries.size() + 1) + ": "));
      value.entries.push_back(e);
    }
    return value;
  }
  if (json.is_number()) return InvalidArgument(where + Dump(json) + " is not an integer");
  return InvalidArgument(where + "a " + json.type_name() +
                         ": give null, an integer, a string, or a list of ids or [id, weight]");
}

// "examples" of a fields request.
Status ParseExamples(const Json& json, PredictRequest* request) {
  const auto examples = json.find("examples");
  if (examples == json.end()) return InvalidArgument("\"examples\" is missing");
  if (!examples->is_array()) {
    return InvalidArgument(std::string("\"examples\" is a ") + examples->type_name() +
                           ", not an array of objects");
  }
  if (examples->empty()) {
    return InvalidArgument("\"examples\" is empty: give one example or more");
  }
  request->examples.reserve(examples->size());
  for (const Json& example : *examples) {
    const std::string at = "example " + std::to_string(request->examples.size() + 1);
    if (!example.is_object()) {
      return InvalidArgument(at + " is a " + example.type_name() +
                             ", not an object of named fields");
    }
    NamedExample named;
    for (const auto& [name, value] : example.items()) {
      PST_ASSIGN_OR_RETURN(named[name], ParseFieldValue(value, at + ": field \"" + name + "\": "));
    }
    request->examples.push_back(std::move(named));
  }
  return Status::OK();
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
                           ", not an object with \"format\" and \"lines\" (or \"examples\")");
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
                           "\": give criteo, libsvm, libffm or fields");
  }
  if (request.format == "fields") {
    PST_RETURN_IF_ERROR(ParseExamples(json, &request));
    return request;
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

#include "serve/request_handler.h"

#include <glog/logging.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "serve/predict_json.h"

namespace pst {
namespace {

HttpResponse Error(int status, const std::string& message) {
  return HttpResponse{status, "application/json", ErrorJson(message), {}};
}

HttpResponse WrongMethod(const HttpRequest& request, const char* allowed) {
  HttpResponse response = Error(405, request.method + " " + request.path + ": use " + allowed);
  response.headers.emplace_back("Allow", allowed);
  return response;
}

// JSON's media type, or none: "application/json; charset=utf-8" is JSON too.
bool IsJson(const std::string& content_type) {
  std::string type = content_type.substr(0, content_type.find(';'));
  type.erase(type.find_last_not_of(" \t") + 1);
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return type.empty() || type == "application/json";
}

// A "fields" request's examples as lines of the format the model reads
// (its *format).
StatusOr<std::vector<std::string>> NamedLines(const ServedModel& served,
                                              const std::vector<NamedExample>& examples,
                                              std::string* format) {
  if (served.field_names == nullptr) return InvalidArgument(served.no_field_names);
  std::vector<std::string> lines;
  lines.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    PST_ASSIGN_OR_RETURN(std::string line,
                         served.field_names->Line(examples[i], static_cast<int64_t>(i + 1)));
    lines.push_back(std::move(line));
  }
  *format = served.field_names->format();
  return lines;
}

}  // namespace

RequestHandler::RequestHandler(ModelHolder* holder, PredictorPool* pool, ServeMetrics* metrics,
                               const MonotonicClock& clock, size_t max_request_bytes)
    : holder_(holder),
      pool_(pool),
      metrics_(metrics),
      clock_(clock),
      max_request_bytes_(max_request_bytes) {}

HttpResponse RequestHandler::Handle(const HttpRequest& request) {
  const MonotonicClock::TimePoint start = clock_.Now();
  int64_t examples = 0;
  HttpResponse response = Route(request, &examples);
  metrics_->RecordRequest(response.status,
                          std::chrono::duration<double>(clock_.Now() - start).count(), examples);
  return response;
}

HttpResponse RequestHandler::Route(const HttpRequest& request, int64_t* examples) {
  if (request.path == "/predict") {
    if (request.method != "POST") return WrongMethod(request, "POST");
    return Predict(request, examples);
  }
  if (request.path == "/healthz" || request.path == "/metrics") {
    if (request.method != "GET") return WrongMethod(request, "GET");
    return request.path == "/healthz" ? Healthz() : Metrics();
  }
  return Error(404,
               "no such path: " + request.path + " (POST /predict, GET /healthz, GET /metrics)");
}

HttpResponse RequestHandler::Predict(const HttpRequest& request, int64_t* examples) {
  if (request.body_too_large) {
    return Error(413, "the body is over " + std::to_string(max_request_bytes_) +
                          " bytes (--max_request_bytes)");
  }
  if (!IsJson(request.content_type)) {
    return Error(415, "Content-Type " + request.content_type + " is not application/json");
  }
  StatusOr<PredictRequest> parsed = ParsePredictRequest(request.body);
  if (!parsed.ok()) return Error(400, parsed.status().message());
  std::string why_none;
  // This request's model, to its end: a model published meanwhile does not
  // touch it.
  const std::shared_ptr<const ServedModel> served = holder_->Get(&why_none);
  if (served == nullptr) return Error(503, "no model to answer with: " + why_none);
  StatusOr<PredictorPool::Lease> lease = pool_->Acquire(served);
  if (!lease.ok()) return Error(500, lease.status().message());
  LoadedModel& model = lease->model();
  if (parsed->format == "fields") {
    StatusOr<std::vector<std::string>> lines =
        NamedLines(*served, parsed->examples, &parsed->format);
    if (!lines.ok()) return Error(400, lines.status().message());
    parsed->lines = std::move(lines).value();
  }
  StatusOr<Dataset> data = model.ParseTestLines(parsed->lines, parsed->format);
  if (!data.ok()) return Error(400, data.status().message());
  // Click models have 2 classes: the probability of a click is class 1's.
  std::vector<float> classes(data->size * served->trained.num_classes);
  if (const Status predicted = model.PredictDataset(*data, classes.data()); !predicted.ok()) {
    // InvalidArgument: the lines do not fit the model (another format's).
    if (predicted.code() == Code::kInvalidArgument) return Error(400, predicted.message());
    LOG(ERROR) << "serve: prediction failed: " << predicted.ToString();
    return Error(500, predicted.message());
  }
  std::vector<float> clicks(data->size);
  for (int64_t i = 0; i < data->size; ++i) {
    clicks[i] = classes[i * served->trained.num_classes + 1];
  }
  *examples = data->size;
  return HttpResponse{
      200, "application/json", PredictAnswerJson(clicks, served->step, served->base_step), {}};
}

HttpResponse RequestHandler::Healthz() {
  std::string why_none;
  const std::shared_ptr<const ServedModel> served = holder_->Get(&why_none);
  if (served == nullptr) return Error(503, "no model to answer with: " + why_none);
  return HttpResponse{200,
                      "application/json",
                      "{\"status\":\"ok\",\"model_step\":" + std::to_string(served->step) + "}",
                      {}};
}

HttpResponse RequestHandler::Metrics() {
  const std::shared_ptr<const ServedModel> served = holder_->Get();
  return HttpResponse{
      200,
      "text/plain; version=0.0.4",
      metrics_->Page(served.get(), holder_->loads(), std::chrono::system_clock::now()),
      {}};
}

}  // namespace pst

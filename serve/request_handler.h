// RequestHandler: the serve executable's answers, one HttpRequest in, one
// HttpResponse out (docs/SERVING.md):
//   POST /predict   click probabilities of the request's lines (or named
//                   examples, serve/named_fields.h), from the model served
//                   when the request came in, whole
//   GET /healthz    200 when a model is served, else 503
//   GET /metrics    Prometheus text (serve/serve_metrics.h)
// Errors are JSON {"error": "..."}: 400 malformed JSON, a missing or
// mistyped member, an unknown format, a line the reader refuses (naming it),
// a named field the model does not have (naming it), a model without names;
// 404 another path; 405 another method; 413 a body over the limit; 415 a
// Content-Type other than JSON's (none is taken as JSON); 503 no model yet
// (saying why); 500 a prediction that failed.
//
// Thread safety: Handle from any thread. Borrows the holder, the pool, the
// metrics and the clock.
#ifndef PST_SERVE_REQUEST_HANDLER_H_
#define PST_SERVE_REQUEST_HANDLER_H_

#include <cstddef>
#include <cstdint>

#include "common/clock.h"
#include "serve/http_types.h"
#include "serve/model_holder.h"
#include "serve/predictor_pool.h"
#include "serve/serve_metrics.h"

namespace pst {

class RequestHandler {
 public:
  // `max_request_bytes` only names the limit in a 413.
  RequestHandler(ModelHolder* holder, PredictorPool* pool, ServeMetrics* metrics,
                 const MonotonicClock& clock, size_t max_request_bytes);

  HttpResponse Handle(const HttpRequest& request);

 private:
  // The answer, and the examples it answered in *examples.
  HttpResponse Route(const HttpRequest& request, int64_t* examples);
  HttpResponse Predict(const HttpRequest& request, int64_t* examples);
  HttpResponse Healthz();
  HttpResponse Metrics();

  ModelHolder* const holder_;
  PredictorPool* const pool_;
  ServeMetrics* const metrics_;
  const MonotonicClock& clock_;
  const size_t max_request_bytes_;
};

}  // namespace pst

#endif  // PST_SERVE_REQUEST_HANDLER_H_

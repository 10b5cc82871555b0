// ModelServer: the serve executable's parts, started together and stopped
// together: the served model (a model.bin loaded once, or an export folder
// polled every reload_every by an ExportWatcher on its own thread), the
// predictor pool, the metrics, the request handler and the HTTP server.
// docs/SERVING.md describes what it answers.
//
// Thread safety: Start and the destructor from one thread.
#ifndef PST_SERVE_MODEL_SERVER_H_
#define PST_SERVE_MODEL_SERVER_H_

#include <chrono>
#include <memory>
#include <string>

#include "common/periodic_thread.h"
#include "common/status.h"
#include "serve/export_watcher.h"
#include "serve/http_server.h"
#include "serve/model_holder.h"
#include "serve/predictor_pool.h"
#include "serve/request_handler.h"
#include "serve/serve_metrics.h"

namespace pst {

struct ServeOptions {
  // Exactly one of the two: the chief's export folder, followed; or a
  // model.bin, loaded once.
  std::string export_dir;
  std::string model_file;
  std::chrono::milliseconds reload_every{1000};
  HttpServerOptions http;
};

class ModelServer {
 public:
  // Loads model_file, or starts following export_dir (its first poll runs
  // at once, on the watcher's thread), then starts serving HTTP. Errors:
  // ServeModelFile's, HttpServer::Start's.
  static StatusOr<std::unique_ptr<ModelServer>> Start(const ServeOptions& options);

  // Stops the HTTP server (requests in flight finish), then the watcher.
  ~ModelServer() = default;

  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  int port() const { return http_.port(); }
  const ModelHolder& holder() const { return holder_; }

 private:
  explicit ModelServer(const ServeOptions& options);

  // Destroyed in reverse order: the HTTP server first, the holder last.
  ModelHolder holder_;
  PredictorPool pool_;
  ServeMetrics metrics_;
  RequestHandler handler_;
  std::unique_ptr<ExportWatcher> watcher_;
  std::unique_ptr<PeriodicThread> watching_;  // calls watcher_->Poll()
  HttpServer http_;
};

}  // namespace pst

#endif  // PST_SERVE_MODEL_SERVER_H_

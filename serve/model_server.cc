#include "serve/model_server.h"

#include <glog/logging.h>

#include <utility>

namespace pst {

ModelServer::ModelServer(const ServeOptions& options)
    : holder_("no model loaded yet"),
      handler_(&holder_, &pool_, &metrics_, SteadyClock(), options.http.max_request_bytes),
      http_(options.http, [this](const HttpRequest& request) { return handler_.Handle(request); }) {
}

StatusOr<std::unique_ptr<ModelServer>> ModelServer::Start(const ServeOptions& options) {
  CHECK(options.export_dir.empty() != options.model_file.empty())
      << "give export_dir or model_file";
  std::unique_ptr<ModelServer> server(new ModelServer(options));
  if (!options.model_file.empty()) {
    PST_ASSIGN_OR_RETURN(std::unique_ptr<ServedModel> model, ServeModelFile(options.model_file));
    server->holder_.Publish(std::move(model));
  } else {
    server->watcher_ = std::make_unique<ExportWatcher>(options.export_dir, &server->holder_);
    ExportWatcher* watcher = server->watcher_.get();
    server->watching_ =
        std::make_unique<PeriodicThread>(options.reload_every, [watcher] { watcher->Poll(); });
  }
  PST_RETURN_IF_ERROR(server->http_.Start());
  return server;
}

}  // namespace pst

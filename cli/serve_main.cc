// serve: click probabilities over HTTP from the newest exported model
// (docs/SERVING.md).
#include <glog/logging.h>

#include <iostream>

#include "cli/serve_flags.h"
#include "serve/run_serve.h"

int main(int argc, char** argv) {
  pst::InitServe(&argc, &argv,
                 "serve --export_dir=DIR | --model_file=FILE [--port=8500] [--host=127.0.0.1]: "
                 "answers POST /predict with click probabilities from the newest model of the "
                 "chief's export folder (or a model.bin), GET /healthz and GET /metrics");
  auto options = pst::ServeOptionsFromFlags();
  if (!options.ok()) {
    std::cerr << "serve: " << options.status().message() << std::endl;
    return 2;
  }
  const pst::Status status = pst::RunServe(*options);
  if (!status.ok()) LOG(ERROR) << status.ToString();
  return status.ok() ? 0 : 1;
}

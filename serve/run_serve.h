// RunServe: the serve executable's whole run: a ModelServer until SIGINT or
// SIGTERM. Logs "serve: listening on HOST:PORT" once it answers (tests and
// scripts read the port a --port=0 got from it).
#ifndef PST_SERVE_RUN_SERVE_H_
#define PST_SERVE_RUN_SERVE_H_

#include "common/status.h"
#include "serve/model_server.h"

namespace pst {

// Call from main() before any other thread starts (it blocks the stop
// signals for the threads it starts). OK after a signal; ModelServer::Start's
// errors.
Status RunServe(const ServeOptions& options);

}  // namespace pst

#endif  // PST_SERVE_RUN_SERVE_H_

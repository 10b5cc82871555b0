#include "serve/run_serve.h"

#include <glog/logging.h>
#include <sys/resource.h>

#include <algorithm>

#include "common/mutex.h"
#include "common/signal_watcher.h"

namespace pst {
namespace {

// Each connection is a file descriptor: the soft limit (often 1024) is
// raised toward the hard one so that `connections` fit, with room for the
// model's files and the listening sockets.
void RaiseOpenFileLimit(unsigned connections) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t wanted = std::min<rlim_t>(rlim_t{connections} + 64, limit.rlim_max);
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = wanted;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur < rlim_t{connections} + 64) {
    LOG(WARNING) << "serve: at most " << limit.rlim_cur << " open files (ulimit -n): fewer than "
                 << connections << " connections fit";
  }
}

}  // namespace

Status RunServe(const ServeOptions& options) {
  Mutex mu;
  CondVar signalled;
  int signal = 0;
  // First: the threads started below inherit its blocked signals.
  SignalWatcher watcher([&](int s) {
    MutexLock lock(mu);
    signal = s;
    signalled.NotifyAll();
  });
  RaiseOpenFileLimit(options.http.connection_limit);
  PST_ASSIGN_OR_RETURN(std::unique_ptr<ModelServer> server, ModelServer::Start(options));
  LOG(INFO) << "serve: listening on " << options.http.host << ":" << server->port();
  {
    MutexLock lock(mu);
    while (signal == 0) signalled.Wait(mu);
  }
  LOG(INFO) << "serve: signal " << signal << ", stopping";
  return Status::OK();
}

}  // namespace pst

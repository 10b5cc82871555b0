// What every benchmark's main does first: glog to stderr, --help and
// --version answered, the flags parsed, glog started.
#ifndef PST_BENCH_BENCH_MAIN_H_
#define PST_BENCH_BENCH_MAIN_H_

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "cli/help_request.h"

namespace pst {

// False when --help or --version was answered: main then returns 0.
// `usage`: the one-line usage --help prints; `source`: the file defining the
// benchmark's flags.
inline bool StartBenchmark(int* argc, char*** argv, const char* usage, const char* source) {
  FLAGS_logtostderr = true;
  gflags::SetUsageMessage(usage);
  if (PrintHelpOrVersion(*argc, *argv, source)) return false;
  gflags::ParseCommandLineFlags(argc, argv, true);
  google::InitGoogleLogging((*argv)[0]);
  return true;
}

}  // namespace pst

#endif  // PST_BENCH_BENCH_MAIN_H_

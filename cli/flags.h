// Command-line flags of every executable, in one place: every task accepts
// the whole cluster's flag set (so one --flagfile configures a cluster) and
// ignores the flags that are not its own.
//
// Only main() calls into this library. Bad flags are reported as one line
// naming the flag and its value, and the process exits with code 2.
#ifndef PST_CLI_FLAGS_H_
#define PST_CLI_FLAGS_H_

#include <gflags/gflags.h>

#include <vector>

#include "cli/help.h"
#include "common/status.h"
#include "predict/predictor.h"
#include "ps/ps_task.h"
#include "scheduler/chief_task.h"
#include "worker/worker_task.h"

namespace pst {

inline constexpr int kFlagErrorExitCode = 2;

// Parses gflags, sets up glog to log to stderr. Exits 2 on an unparsable
// value or an unknown flag, on the command line or in a --flagfile (the line
// names the file and suggests the nearest flag). Answers --help, -h,
// --helpshort (cli/help.h: the flags `program` reads first), --helpfull and
// --version on stdout, and exits 0.
void InitProgram(Program program, int* argc, char*** argv, const char* usage);

// The flags defined in flags.cc (the project's, not glog's or gflags').
std::vector<gflags::CommandLineFlagInfo> ProjectFlags();

// Build each role's options from the flags and TF_CONFIG (an explicit flag
// wins over TF_CONFIG). InvalidArgument names the bad flag.
StatusOr<PsOptions> PsOptionsFromFlags();
StatusOr<WorkerOptions> WorkerOptionsFromFlags();
StatusOr<ChiefOptions> ChiefOptionsFromFlags();
StatusOr<PredictOptions> PredictOptionsFromFlags();

// Prints "<program>: <message>" on stderr and returns kFlagErrorExitCode.
int ReportFlagError(const Status& status);

}  // namespace pst

#endif  // PST_CLI_FLAGS_H_

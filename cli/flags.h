// Command-line flags of every executable, in one place: every task accepts
// the whole cluster's flag set (so one --flagfile configures a cluster) and
// ignores the flags that are not its own. Every flag is defined in flags.cc;
// the files that turn flags into a role's options (cli/ps_flags.h,
// cli/worker_flags.h, cli/chief_flags.h, cli/predict_flags.h, and the parts
// they share: cli/task_flags.h, cli/job_flags.h) declare the ones they read,
// so this library links no role's code.
//
// Only main() calls into these libraries. Bad flags are reported as one line
// naming the flag and its value, and the process exits with code 2.
#ifndef PST_CLI_FLAGS_H_
#define PST_CLI_FLAGS_H_

#include <gflags/gflags.h>

#include <cstdint>
#include <vector>

#include "cli/help.h"
#include "common/status.h"

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

// Whether --name was given (on the command line or in a --flagfile), as
// opposed to holding its default.
bool FlagGiven(const char* name);

// OK when value > 0, else InvalidArgument "--name=value must be positive".
Status CheckPositiveFlag(const char* name, int64_t value);

// Prints "<program>: <message>" on stderr and returns kFlagErrorExitCode.
int ReportFlagError(const Status& status);

}  // namespace pst

#endif  // PST_CLI_FLAGS_H_

// serve's flags (defined in serve_flags.cc, serve's own: it does not take
// the cluster's flag set of cli/flags.cc) and its options from them. For
// main() only.
#ifndef PST_CLI_SERVE_FLAGS_H_
#define PST_CLI_SERVE_FLAGS_H_

#include <string>

#include "common/status.h"
#include "serve/model_server.h"

namespace pst {

// Answers --help, -h, --helpfull (serve's flags by topic, as the other
// programs print theirs) and --version on stdout and exits 0; else parses
// the flags (an unknown or unparsable one: one line on stderr, exit 2) and
// sends glog to stderr.
void InitServe(int* argc, char*** argv, const char* usage);

// InvalidArgument naming the bad flag: neither or both of --export_dir and
// --model_file, a value out of range.
StatusOr<ServeOptions> ServeOptionsFromFlags();

// serve's --help text.
std::string ServeHelp(const std::string& usage);

}  // namespace pst

#endif  // PST_CLI_SERVE_FLAGS_H_

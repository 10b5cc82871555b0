// Finds --help, --helpfull and --version among a program's arguments, so
// every executable can answer them (exit 0) before it parses anything else:
// before the check for unknown flags ("-h" is no gflags flag) and instead of
// gflags' own handlers, which list glog's flags first and exit 1.
#ifndef PST_CLI_HELP_REQUEST_H_
#define PST_CLI_HELP_REQUEST_H_

#include <string>

namespace pst {

enum class HelpRequest {
  kNone,
  kHelp,      // --help, -h, --helpshort: the program's own flags
  kHelpFull,  // --helpfull: glog's and gflags' flags too
  kVersion,   // --version
};

// The first request among argv[1..] before a "--", with one dash or two
// ("-help", "--version"); kNone when there is none.
HelpRequest FindHelpRequest(int argc, char** argv);

// "chief" for "/path/to/chief".
std::string ProgramName(const char* argv0);

// For programs whose flags are all defined in one file (the benchmarks):
// prints the usage message and the flags of files whose path contains
// `flags_file` (all flags for --helpfull), or VersionLine, on stdout, and
// returns true; false when argv holds no request.
bool PrintHelpOrVersion(int argc, char** argv, const char* flags_file);

}  // namespace pst

#endif  // PST_CLI_HELP_REQUEST_H_

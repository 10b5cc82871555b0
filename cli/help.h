// --help of ps, worker and chief: the project's flags (cli/flags.cc) grouped
// by topic, each with its default. The groups are a table in help.cc; a
// flag missing from it is shown under "Other" and fails cli_help_test, so
// every new flag gets a place.
#ifndef PST_CLI_HELP_H_
#define PST_CLI_HELP_H_

#include <string>
#include <vector>

namespace pst {

// The executables that read the project's flags: the three tasks, and
// predict (a trained model on a data set).
enum class Program { kPs, kWorker, kChief, kPredict };
const char* ProgramName(Program program);  // "ps", "worker", "chief", "predict"

// "usage: <usage>", then the groups of flags `program` reads, cluster first,
// then, for a task, the groups only other tasks read (every task accepts
// every flag), then how to get more. Each group is one screen (under 40
// lines).
std::string ProjectHelp(Program program, const std::string& usage);

// --helpfull: ProjectHelp, then glog's and gflags' own flags.
std::string FullHelp(Program program, const std::string& usage);

// Project flags that no group of the table holds (the test wants none).
std::vector<std::string> UngroupedProjectFlags();

// Names in the table that are not project flags (a flag renamed or removed).
std::vector<std::string> UnknownFlagsInHelpTable();

}  // namespace pst

#endif  // PST_CLI_HELP_H_

// --help of ps, worker and chief: the project's flags (cli/flags.cc) grouped
// by topic, each with its default. The groups are a table in help.cc; a
// flag missing from it is shown under "Other" and fails cli_help_test, so
// every new flag gets a place.
#ifndef PST_CLI_HELP_H_
#define PST_CLI_HELP_H_

#include <string>
#include <vector>

#include "cluster/cluster_spec.h"

namespace pst {

// "usage: <usage>", then the groups of flags `role` reads, cluster first,
// then the groups only other tasks read (every task accepts every flag), then
// how to get more. Each group is one screen (under 40 lines).
std::string ProjectHelp(TaskType role, const std::string& usage);

// --helpfull: ProjectHelp, then glog's and gflags' own flags.
std::string FullHelp(TaskType role, const std::string& usage);

// Project flags that no group of the table holds (the test wants none).
std::vector<std::string> UngroupedProjectFlags();

// Names in the table that are not project flags (a flag renamed or removed).
std::vector<std::string> UnknownFlagsInHelpTable();

}  // namespace pst

#endif  // PST_CLI_HELP_H_

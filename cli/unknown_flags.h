// Unknown flags: gflags rejects an unknown flag on the command line but
// silently skips one in a --flagfile, so a misspelled flag in a flag file
// (every flag run_local.sh passes is in one) would be ignored. Every name is
// checked here before gflags parses, with the nearest known flag suggested.
#ifndef PST_CLI_UNKNOWN_FLAGS_H_
#define PST_CLI_UNKNOWN_FLAGS_H_

#include "common/status.h"

namespace pst {

// InvalidArgument ("unknown flag --train_stepz in cluster.flags (did you
// mean --train_steps?)") when a flag on the command line, or in a flag file
// it names (also nested), is not defined.
Status CheckFlagNames(int argc, char** argv);

}  // namespace pst

#endif  // PST_CLI_UNKNOWN_FLAGS_H_

// The ps' options from the flags and TF_CONFIG (an explicit flag wins over
// TF_CONFIG). InvalidArgument names the bad flag. For main() only.
#ifndef PST_CLI_PS_FLAGS_H_
#define PST_CLI_PS_FLAGS_H_

#include "common/status.h"
#include "ps/ps_task.h"

namespace pst {

StatusOr<PsOptions> PsOptionsFromFlags();

}  // namespace pst

#endif  // PST_CLI_PS_FLAGS_H_

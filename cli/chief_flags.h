// The chief's options from the flags and TF_CONFIG (an explicit flag wins over
// TF_CONFIG). InvalidArgument names the bad flag. For main() only.
#ifndef PST_CLI_CHIEF_FLAGS_H_
#define PST_CLI_CHIEF_FLAGS_H_

#include "chief/chief_options.h"
#include "common/status.h"

namespace pst {

StatusOr<ChiefOptions> ChiefOptionsFromFlags();

}  // namespace pst

#endif  // PST_CLI_CHIEF_FLAGS_H_

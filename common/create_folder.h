// CreateFolder: a folder and its parents, or a FileError naming it.
#ifndef PST_COMMON_CREATE_FOLDER_H_
#define PST_COMMON_CREATE_FOLDER_H_

#include <filesystem>
#include <string>

#include "common/status.h"

namespace pst {

// Creates `folder` and its parents ("" or one that exists: nothing to do);
// `what` names it in the error ("cannot create <what>").
Status CreateFolder(const std::filesystem::path& folder, const std::string& what);

}  // namespace pst

#endif  // PST_COMMON_CREATE_FOLDER_H_

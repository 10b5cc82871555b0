#include "common/create_folder.h"

#include <system_error>

namespace pst {

Status CreateFolder(const std::filesystem::path& folder, const std::string& what) {
  if (folder.empty()) return Status::OK();
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return FileError("cannot create " + what, error.value());
  return Status::OK();
}

}  // namespace pst

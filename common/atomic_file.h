// Writing a file so that readers see either the old or the new contents,
// never a torn one: write "<path>.tmp", fsync it, rename it over <path>,
// fsync the folder.
#ifndef PST_COMMON_ATOMIC_FILE_H_
#define PST_COMMON_ATOMIC_FILE_H_

#include <string>

#include "common/status.h"

namespace pst {

// A FileError (e.g. ResourceExhausted on a full disk) naming the file and
// the failing step on an I/O error; the temporary file is removed.
Status WriteFileAtomically(const std::string& path, const std::string& contents);

}  // namespace pst

#endif  // PST_COMMON_ATOMIC_FILE_H_

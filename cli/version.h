// What --version prints: the project's version (top-level CMakeLists.txt),
// the git commit and build type of the build, and the compute back ends
// compiled in.
#ifndef PST_CLI_VERSION_H_
#define PST_CLI_VERSION_H_

#include <string>

namespace pst {

// VersionLine("chief"): "chief (pstrain) 0.5.0, commit 1a2b3c4 (dirty),
// Release build; back ends: cpu (Eigen 3.4.0, AVX2, FMA), cuda 13.0 + cuDNN
// 9.19.0". The commit is "unknown" when the build had no git checkout.
std::string VersionLine(const std::string& program);

}  // namespace pst

#endif  // PST_CLI_VERSION_H_

#include "cli/version.h"

#include <Eigen/Core>

#include "cli/build_info.h"  // generated: PST_GIT_COMMIT

#ifdef PST_CUDA_VERSION
#include <cudnn_version.h>
#endif

namespace pst {
namespace {

// The Eigen version and the vector instructions it was compiled for (all of
// the project's C++ shares one -march, top-level CMakeLists.txt).
std::string CpuBackEnd() {
  std::string text = "cpu (Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
                     std::to_string(EIGEN_MAJOR_VERSION) + "." +
                     std::to_string(EIGEN_MINOR_VERSION);
#if defined(__AVX512F__)
  text += ", AVX-512";
#elif defined(__AVX2__)
  text += ", AVX2";
#elif defined(__AVX__)
  text += ", AVX";
#elif defined(__SSE2__)
  text += ", SSE2";
#endif
#ifdef __FMA__
  text += ", FMA";
#endif
  return text + ")";
}

}  // namespace

std::string VersionLine(const std::string& program) {
  std::string text = program + " (pstrain) " PST_VERSION ", commit " PST_GIT_COMMIT ", " +
                     std::string(PST_BUILD_TYPE) + " build; back ends: " + CpuBackEnd();
#ifdef PST_CUDA_VERSION
  text += ", cuda " PST_CUDA_VERSION " + cuDNN " + std::to_string(CUDNN_MAJOR) + "." +
          std::to_string(CUDNN_MINOR) + "." + std::to_string(CUDNN_PATCHLEVEL);
#endif
  return text;
}

}  // namespace pst

#include "cli/version.h"

#include <Eigen/Core>

#include "cli/build_info.h"  // generated: PST_GIT_COMMIT

#ifdef PST_WITH_ONEDNN
#include <dnnl_version.h>
#endif
#ifdef PST_CUDA_VERSION
#include <cudnn_version.h>
#endif

namespace pst {
namespace {

// The oneDNN version where built in (the default cpu kernels), the Eigen
// version and the vector instructions Eigen was compiled for (all of the
// project's C++ shares one -march, top-level CMakeLists.txt; oneDNN picks
// its own at run time).
std::string CpuBackEnd() {
  std::string text = "cpu (";
#ifdef PST_WITH_ONEDNN
  text += "oneDNN " + std::to_string(DNNL_VERSION_MAJOR) + "." +
          std::to_string(DNNL_VERSION_MINOR) + "." + std::to_string(DNNL_VERSION_PATCH) +
          ", the default; ";
#endif
  text += "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
          std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
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

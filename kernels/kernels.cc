#include "kernels/kernels.h"

#include <algorithm>
#include <cctype>

#include "kernels/cpu_kernels.h"

namespace pst {
namespace {

// "gpu:N" with N a decimal index.
bool IsGpuDevice(const std::string& device) {
  const std::string prefix = "gpu:";
  if (device.size() <= prefix.size() ||
      device.compare(0, prefix.size(), prefix) != 0) {
    return false;
  }
  return std::all_of(device.begin() + prefix.size(), device.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

StatusOr<std::unique_ptr<Kernels>> MakeKernels(const std::string& device,
                                               const KernelsOptions& /*options*/) {
  if (device == "cpu") return std::unique_ptr<Kernels>(new CpuKernels());
  if (!IsGpuDevice(device)) {
    return InvalidArgument("unknown device '" + device +
                           "': expected 'cpu' or 'gpu:N'");
  }
#ifdef PST_WITH_CUDA
  return FailedPrecondition(
      "device '" + device +
      "' is not usable: this build has the CUDA back end, but the model "
      "kernels have no GPU implementation yet; use device 'cpu'");
#else
  return FailedPrecondition(
      "device '" + device +
      "' is not usable: this build has no CUDA back end (reconfigure with "
      "nvcc installed and -DWITH_CUDA=ON); use device 'cpu'");
#endif
}

}  // namespace pst

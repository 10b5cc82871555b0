#include "kernels/kernels.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "kernels/cpu_kernels.h"
#ifdef PST_WITH_CUDA
#include "kernels/gpu/gpu_kernels.h"
#endif

namespace pst {
namespace {

constexpr char kGpuPrefix[] = "gpu:";

// "gpu:N" with N a decimal index.
bool IsGpuDevice(const std::string& device) {
  const size_t prefix = std::strlen(kGpuPrefix);
  if (device.size() <= prefix || device.compare(0, prefix, kGpuPrefix) != 0) {
    return false;
  }
  return std::all_of(device.begin() + prefix, device.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

StatusOr<std::unique_ptr<Kernels>> MakeKernels(
    const std::string& device,
    [[maybe_unused]] const KernelsOptions& options) {  // unused without CUDA
  if (device == "cpu") return std::unique_ptr<Kernels>(new CpuKernels());
  if (!IsGpuDevice(device)) {
    return InvalidArgument("unknown device '" + device +
                           "': expected 'cpu' or 'gpu:N'");
  }
#ifdef PST_WITH_CUDA
  const std::string index = device.substr(std::strlen(kGpuPrefix));
  if (index.size() > 9) {  // beyond int: no GPU has such an index
    return FailedPrecondition("device '" + device +
                              "' is not usable: no such GPU; use device 'cpu'");
  }
  return MakeGpuKernels(std::stoi(index), options);
#else
  return FailedPrecondition(
      "device '" + device +
      "' is not usable: this build has no CUDA back end (reconfigure with "
      "nvcc installed and -DWITH_CUDA=ON); use device 'cpu'");
#endif
}

}  // namespace pst

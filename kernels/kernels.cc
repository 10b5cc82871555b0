#include "kernels/kernels.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "kernels/cpu_kernels.h"
#ifdef PST_WITH_ONEDNN
#include "kernels/onednn_kernels.h"
#endif
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

StatusOr<std::unique_ptr<Kernels>> MakeCpuKernels(const KernelsOptions& options) {
  if (options.intra_op_threads < 1) {
    return InvalidArgument("intra_op_threads must be at least 1, got " +
                           std::to_string(options.intra_op_threads));
  }
  if (options.cpu_kernels == CpuKernelsKind::kEigen) {
    return std::unique_ptr<Kernels>(new CpuKernels());
  }
#ifdef PST_WITH_ONEDNN
  return std::unique_ptr<Kernels>(new OnednnKernels(options.intra_op_threads));
#else
  return FailedPrecondition(
      "the oneDNN cpu kernels are not in this build (reconfigure with "
      "libdnnl-dev installed); use the eigen ones");
#endif
}

}  // namespace

CpuKernelsKind DefaultCpuKernels() {
#ifdef PST_WITH_ONEDNN
  return CpuKernelsKind::kOnednn;
#else
  return CpuKernelsKind::kEigen;
#endif
}

std::vector<CpuKernelsKind> AvailableCpuKernels() {
#ifdef PST_WITH_ONEDNN
  return {CpuKernelsKind::kOnednn, CpuKernelsKind::kEigen};
#else
  return {CpuKernelsKind::kEigen};
#endif
}

const char* CpuKernelsName(CpuKernelsKind kind) {
  return kind == CpuKernelsKind::kOnednn ? "onednn" : "eigen";
}

StatusOr<CpuKernelsKind> ParseCpuKernels(const std::string& name) {
  if (name == "auto") return DefaultCpuKernels();
  for (CpuKernelsKind kind : {CpuKernelsKind::kOnednn, CpuKernelsKind::kEigen}) {
    if (name == CpuKernelsName(kind)) return kind;
  }
  return InvalidArgument("unknown cpu kernels '" + name +
                         "': expected 'auto', 'onednn' or 'eigen'");
}

StatusOr<std::unique_ptr<Kernels>> MakeKernels(const std::string& device,
                                               const KernelsOptions& options) {
  if (device == "cpu") return MakeCpuKernels(options);
  if (!IsGpuDevice(device)) {
    return InvalidArgument("unknown device '" + device + "': expected 'cpu' or 'gpu:N'");
  }
#ifdef PST_WITH_CUDA
  const std::string index = device.substr(std::strlen(kGpuPrefix));
  if (index.size() > 9) {  // beyond int: no GPU has such an index
    return FailedPrecondition("device '" + device +
                              "' is not usable: no such GPU; use device 'cpu'");
  }
  return MakeGpuKernels(std::stoi(index), options);
#else
  return FailedPrecondition("device '" + device +
                            "' is not usable: this build has no CUDA back end (reconfigure with "
                            "nvcc installed and -DWITH_CUDA=ON); use device 'cpu'");
#endif
}

}  // namespace pst

#include "kernels/gpu/gpu_device.h"

#include <cuda_runtime_api.h>

namespace pst {

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    // Clears a passing error; without a usable driver the runtime reports
    // its initialization error again on every call, which is harmless here:
    // no GPU back end can then be made.
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace pst

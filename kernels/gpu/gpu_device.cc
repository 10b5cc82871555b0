#include "kernels/gpu/gpu_device.h"

#include <cuda_runtime_api.h>

namespace pst {

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls do not see it
    return 0;
  }
  return count;
}

}  // namespace pst

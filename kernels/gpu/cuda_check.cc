#include "kernels/gpu/cuda_check.h"

#include <string>

namespace pst {
namespace {

const char* Hint(cudaError_t error) {
  switch (error) {
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
      return "check nvidia-smi and CUDA_VISIBLE_DEVICES, or use device 'cpu'";
    case cudaErrorInsufficientDriver:
      return "the NVIDIA driver is older than this CUDA runtime; update it";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory; lower the batch size or "
             "--gpu_memory_fraction of the other processes";
    case cudaErrorNoKernelImageForDevice:
      return "the binary has no code for this GPU's architecture; rebuild "
             "with CMAKE_CUDA_ARCHITECTURES including it";
    default:
      return "rerun under compute-sanitizer to locate the fault";
  }
}

}  // namespace

Status CudaStatus(cudaError_t error, const char* expr, const char* file,
                  int line) {
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();
  std::string message = std::string(file) + ":" + std::to_string(line) + ": " +
                        expr + " failed: " + cudaGetErrorName(error) + " (" +
                        cudaGetErrorString(error) + "); hint: " + Hint(error);
  const bool no_device = error == cudaErrorNoDevice ||
                         error == cudaErrorInvalidDevice ||
                         error == cudaErrorInsufficientDriver;
  return no_device ? FailedPrecondition(std::move(message))
                   : Internal(std::move(message));
}

}  // namespace pst

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
      return "no NVIDIA driver, or one older than this CUDA runtime: check "
             "nvidia-smi, or use device 'cpu'";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory; lower the batch size or "
             "--gpu_memory_fraction of the other processes";
    case cudaErrorNoKernelImageForDevice:
      return "the binary has no code for this GPU's architecture; rebuild "
             "with CMAKE_CUDA_ARCHITECTURES including it";
    default: return "rerun under compute-sanitizer to locate the fault";
  }
}

const char* Hint(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "cuBLAS could not start: check that the GPU is usable "
             "(nvidia-smi) and has free memory";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "the GPU is out of memory; lower the batch size or "
             "--gpu_memory_fraction of the other processes";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "a matrix dimension is out of cuBLAS's range (negative, or "
             "above 2^31-1): check the shapes passed to the kernel";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "this GPU lacks a feature the call needs";
    default: return "rerun under compute-sanitizer to locate the fault";
  }
}

}  // namespace

Status GpuCallError(Code code, const char* expr, const char* file, int line,
                    const std::string& error, const char* hint) {
  return Status(code, std::string(file) + ":" + std::to_string(line) + ": " + expr +
                          " failed: " + error + "; hint: " + hint);
}

Status CudaStatus(cudaError_t error, const char* expr, const char* file, int line) {
  if (error == cudaSuccess) return Status::OK();
  cudaGetLastError();
  Code code = Code::kInternal;
  if (error == cudaErrorNoDevice || error == cudaErrorInvalidDevice ||
      error == cudaErrorInsufficientDriver) {
    code = Code::kFailedPrecondition;
  } else if (error == cudaErrorMemoryAllocation) {
    code = Code::kResourceExhausted;
  }
  return GpuCallError(code, expr, file, line,
                      std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")",
                      Hint(error));
}

Status CudaStatus(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::OK();
  Code code = Code::kInternal;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    code = Code::kResourceExhausted;
  } else if (status == CUBLAS_STATUS_NOT_INITIALIZED) {
    code = Code::kFailedPrecondition;
  }
  return GpuCallError(
      code, expr, file, line,
      std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")",
      Hint(status));
}

}  // namespace pst

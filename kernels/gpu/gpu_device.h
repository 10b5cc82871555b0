// Device discovery for the CUDA back end. Built only when WITH_CUDA is ON.
#ifndef PST_KERNELS_GPU_GPU_DEVICE_H_
#define PST_KERNELS_GPU_GPU_DEVICE_H_

namespace pst {

// How many CUDA GPUs this process may use (CUDA_VISIBLE_DEVICES applies).
// 0 when there is no GPU or no driver; never fails.
int CudaDeviceCount();

}  // namespace pst

#endif  // PST_KERNELS_GPU_GPU_DEVICE_H_

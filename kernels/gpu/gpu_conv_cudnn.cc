// CudnnConv on cuDNN's (legacy, still supported in cuDNN 9) convolution API.
#include "kernels/gpu/gpu_conv_cudnn.h"

#include <cudnn.h>

#include <limits>
#include <string>
#include <utility>

#include "kernels/gpu/cuda_check.h"

namespace pst {

// The cuDNN overload of CudaStatus (see cuda_check.h). Static at namespace
// scope rather than in the unnamed namespace: PST_CUDA_RETURN_IF_ERROR calls
// ::pst::CudaStatus, and that qualified lookup only finds overloads declared
// directly in pst.
static Status CudaStatus(cudnnStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return Status::OK();
  std::string error = cudnnGetErrorString(status);
  char detail[512] = "";
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') error += " (" + std::string(detail) + ")";
  Code code = Code::kInternal;
  const char* hint =
      "rerun with CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr for cuDNN's "
      "log";
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case 1000:  // CUDNN_STATUS_NOT_INITIALIZED and its kin
      code = Code::kFailedPrecondition;
      hint =
          "cuDNN could not start: check that all of cuDNN 9's libraries "
          "(libcudnn*.so.9) are on the library path and the GPU is usable";
      break;
    case CUDNN_STATUS_BAD_PARAM:
      hint =
          "a convolution shape is invalid (an output size below 1, or a "
          "size above 2^31-1): check the Conv2DShape";
      break;
    case CUDNN_STATUS_NOT_SUPPORTED:
      hint = "cuDNN has no kernel for this convolution on this GPU";
      break;
    default: break;
  }
  if (status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    code = Code::kResourceExhausted;
    hint = "the GPU is out of memory; lower the batch size";
  }
  return GpuCallError(code, expr, file, line, error, hint);
}

namespace {

// Which algorithms may be chosen: those that compute the float32 sums
// directly. The transform-based ones (FFT, Winograd) trade accuracy for
// speed beyond the float32 tolerance the CPU and GPU are held to.
bool Accurate(cudnnConvolutionFwdAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}
bool Accurate(cudnnConvolutionBwdDataAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}
bool Accurate(cudnnConvolutionBwdFilterAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 || algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

// The first of cuDNN's ranked algorithms (fastest expected first) that
// supports the convolution and is Accurate.
template <typename Perf>
StatusOr<decltype(Perf::algo)> Choose(const Perf* perf, int count, const char* direction) {
  for (int i = 0; i < count; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && Accurate(perf[i].algo)) {
      return perf[i].algo;
    }
  }
  return Internal(std::string("cuDNN offers no direct float32 ") + direction +
                  " algorithm for this convolution (of " + std::to_string(count) +
                  " ranked); hint: run with CUDNN_LOGLEVEL_DBG=2 "
                  "CUDNN_LOGDEST_DBG=stderr to see why");
}

// cuDNN's 4-D descriptors take int sizes and index with int.
Status CheckIntRange(const Conv2DShape& s, int64_t batch) {
  const int64_t max = std::numeric_limits<int>::max();
  const int64_t x_size = batch * s.height * s.width * s.in_channels;
  const int64_t y_size = batch * s.out_height() * s.out_width() * s.out_channels;
  const int64_t w_size = s.out_channels * s.filter_height * s.filter_width * s.in_channels;
  for (int64_t v : {x_size, y_size, w_size, s.stride, s.padding}) {
    if (v > max) {
      return InvalidArgument("convolution too large for cuDNN's 32-bit sizes: " +
                             std::to_string(v) + " > " + std::to_string(max));
    }
  }
  return Status::OK();
}

}  // namespace

struct CudnnConv::Plan {
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (x != nullptr) cudnnDestroyTensorDescriptor(x);
    if (y != nullptr) cudnnDestroyTensorDescriptor(y);
    if (w != nullptr) cudnnDestroyFilterDescriptor(w);
    if (conv != nullptr) cudnnDestroyConvolutionDescriptor(conv);
  }

  cudnnTensorDescriptor_t x = nullptr;  // (B,H,W,C), also dx
  cudnnTensorDescriptor_t y = nullptr;  // (B,P,Q,K), also dy
  cudnnFilterDescriptor_t w = nullptr;  // (K,R,S,C), also dw
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t forward_algo{};
  cudnnConvolutionBwdDataAlgo_t backward_data_algo{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter_algo{};
  size_t forward_workspace = 0;
  size_t backward_data_workspace = 0;
  size_t backward_filter_workspace = 0;
};

StatusOr<std::unique_ptr<CudnnConv>> CudnnConv::Create(cudaStream_t stream, GpuMemory* memory) {
  cudnnHandle_t handle = nullptr;
  PST_CUDA_RETURN_IF_ERROR(cudnnCreate(&handle));
  std::unique_ptr<CudnnConv> conv(new CudnnConv(handle, memory));
  PST_CUDA_RETURN_IF_ERROR(cudnnSetStream(handle, stream));
  return conv;
}

CudnnConv::CudnnConv(cudnnContext* handle, GpuMemory* memory) : handle_(handle), memory_(memory) {}

CudnnConv::~CudnnConv() {
  plans_.clear();  // the descriptors go before the handle
  cudnnDestroy(handle_);
}

StatusOr<const CudnnConv::Plan*> CudnnConv::PlanFor(const Conv2DShape& s, int64_t batch) {
  const PlanKey key = {batch,          s.height,       s.width,  s.in_channels, s.filter_height,
                       s.filter_width, s.out_channels, s.stride, s.padding};
  const auto found = plans_.find(key);
  if (found != plans_.end()) return found->second.get();

  PST_RETURN_IF_ERROR(CheckIntRange(s, batch));
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  auto plan = std::make_unique<Plan>();
  PST_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->x));
  PST_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&plan->y));
  PST_CUDA_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&plan->w));
  PST_CUDA_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&plan->conv));
  // The 4-D setters take sizes in NCHW order whatever the memory layout.
  PST_CUDA_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                                      i(batch), i(s.in_channels), i(s.height),
                                                      i(s.width)));
  PST_CUDA_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(plan->y, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT,
                                                      i(batch), i(s.out_channels),
                                                      i(s.out_height()), i(s.out_width())));
  PST_CUDA_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(plan->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC,
                                                      i(s.out_channels), i(s.in_channels),
                                                      i(s.filter_height), i(s.filter_width)));
  // Kernels' convolution is a cross-correlation (the filter is not flipped).
  PST_CUDA_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(
      plan->conv, i(s.padding), i(s.padding), i(s.stride), i(s.stride),
      /*dilation_h=*/1, /*dilation_w=*/1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  // FMA math: no TF32 (cuDNN's default for float32 on Ampere and later),
  // whose 10-bit mantissa would break the float32 tolerance.
  PST_CUDA_RETURN_IF_ERROR(cudnnSetConvolutionMathType(plan->conv, CUDNN_FMA_MATH));

  int n = 0, k = 0, p = 0, q = 0;
  PST_CUDA_RETURN_IF_ERROR(
      cudnnGetConvolution2dForwardOutputDim(plan->conv, plan->x, plan->w, &n, &k, &p, &q));
  if (n != batch || k != s.out_channels || p != s.out_height() || q != s.out_width()) {
    return Internal("cuDNN's convolution output (" + std::to_string(n) + "," + std::to_string(p) +
                    "," + std::to_string(q) + "," + std::to_string(k) +
                    ") differs from Conv2DShape's");
  }

  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  PST_CUDA_RETURN_IF_ERROR(
      cudnnGetConvolutionForwardAlgorithm_v7(handle_, plan->x, plan->w, plan->conv, plan->y,
                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, forward));
  PST_ASSIGN_OR_RETURN(plan->forward_algo, Choose(forward, count, "forward"));
  PST_CUDA_RETURN_IF_ERROR(
      cudnnGetConvolutionForwardWorkspaceSize(handle_, plan->x, plan->w, plan->conv, plan->y,
                                              plan->forward_algo, &plan->forward_workspace));

  cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  PST_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      handle_, plan->w, plan->y, plan->conv, plan->x, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count,
      data));
  PST_ASSIGN_OR_RETURN(plan->backward_data_algo, Choose(data, count, "backward-data"));
  PST_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataWorkspaceSize(
      handle_, plan->w, plan->y, plan->conv, plan->x, plan->backward_data_algo,
      &plan->backward_data_workspace));

  cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  PST_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      handle_, plan->x, plan->y, plan->conv, plan->w, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
      &count, filter));
  PST_ASSIGN_OR_RETURN(plan->backward_filter_algo, Choose(filter, count, "backward-filter"));
  PST_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionBackwardFilterWorkspaceSize(
      handle_, plan->x, plan->y, plan->conv, plan->w, plan->backward_filter_algo,
      &plan->backward_filter_workspace));

  const Plan* made = plan.get();
  plans_.emplace(key, std::move(plan));
  return made;
}

StatusOr<void*> CudnnConv::Workspace(size_t bytes) {
  if (bytes == 0) return static_cast<void*>(nullptr);
  PST_RETURN_IF_ERROR(memory_->Reserve(bytes, &workspace_));
  return workspace_->data();
}

Status CudnnConv::Forward(const float* x, const float* w, float* y, const Conv2DShape& shape,
                          int64_t batch) {
  PST_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(shape, batch));
  PST_ASSIGN_OR_RETURN(void* workspace, Workspace(plan->forward_workspace));
  const float alpha = 1.0f, beta = 0.0f;  // y = conv, overwritten
  PST_CUDA_RETURN_IF_ERROR(cudnnConvolutionForward(handle_, &alpha, plan->x, x, plan->w, w,
                                                   plan->conv, plan->forward_algo, workspace,
                                                   plan->forward_workspace, &beta, plan->y, y));
  return Status::OK();
}

Status CudnnConv::BackwardData(const float* dy, const float* w, float* dx, const Conv2DShape& shape,
                               int64_t batch) {
  PST_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(shape, batch));
  PST_ASSIGN_OR_RETURN(void* workspace, Workspace(plan->backward_data_workspace));
  const float alpha = 1.0f, beta = 0.0f;
  PST_CUDA_RETURN_IF_ERROR(cudnnConvolutionBackwardData(
      handle_, &alpha, plan->w, w, plan->y, dy, plan->conv, plan->backward_data_algo, workspace,
      plan->backward_data_workspace, &beta, plan->x, dx));
  return Status::OK();
}

Status CudnnConv::BackwardFilter(const float* x, const float* dy, float* dw,
                                 const Conv2DShape& shape, int64_t batch) {
  PST_ASSIGN_OR_RETURN(const Plan* plan, PlanFor(shape, batch));
  PST_ASSIGN_OR_RETURN(void* workspace, Workspace(plan->backward_filter_workspace));
  const float alpha = 1.0f, beta = 0.0f;
  PST_CUDA_RETURN_IF_ERROR(cudnnConvolutionBackwardFilter(
      handle_, &alpha, plan->x, x, plan->y, dy, plan->conv, plan->backward_filter_algo, workspace,
      plan->backward_filter_workspace, &beta, plan->w, dw));
  return Status::OK();
}

}  // namespace pst

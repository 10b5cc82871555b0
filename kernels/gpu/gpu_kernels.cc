// GpuKernels: the per-device context of gpu_kernels.h and the Kernels
// methods on it.
//
// Row-major operands on column-major cuBLAS: a row-major (M,N) matrix is, in
// the same memory, the column-major (N,M) matrix of its transpose. So every
// row-major product C = A*B is computed as the column-major product
// C^T = B^T * A^T: the operands swap places, their leading dimensions are
// their row-major row lengths, and no data moves.
#include "kernels/gpu/gpu_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gpu/cuda_batch_norm.h"
#include "kernels/gpu/cuda_check.h"
#include "kernels/gpu/cuda_math.h"
#include "kernels/gpu/gpu_conv_cudnn.h"
#include "kernels/gpu/gpu_memory.h"
#include "kernels/gpu/pinned_staging.h"

namespace pst {
namespace {

class GpuKernels : public Kernels {
 public:
  explicit GpuKernels(int device_index);
  ~GpuKernels() override;
  GpuKernels(const GpuKernels&) = delete;
  GpuKernels& operator=(const GpuKernels&) = delete;

  // Makes the stream, handles and memory cap; the object is unusable when
  // this fails (and its destructor cleans up what was made).
  Status Init(const KernelsOptions& options);

  const std::string& device() const override { return device_; }
  bool host_memory() const override { return false; }

  StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(size_t bytes) override;
  void CopyToDevice(const void* host_src, void* device_dst, size_t bytes) override;
  void CopyToHost(const void* device_src, void* host_dst, size_t bytes) override;
  Status TakeError() override;

  void MatmulForward(const float* x, const float* w, const float* b, float* y, int64_t batch,
                     int64_t in, int64_t out) override;
  void MatmulBackwardInput(const float* dy, const float* w, float* dx, int64_t batch, int64_t in,
                           int64_t out) override;
  void MatmulBackwardWeights(const float* x, const float* dy, float* dw, int64_t batch, int64_t in,
                             int64_t out) override;
  void BiasBackward(const float* dy, float* db, int64_t batch, int64_t out) override;

  void SigmoidForward(const float* x, float* y, int64_t n) override;
  void SigmoidBackward(const float* y, const float* dy, float* dx, int64_t n) override;
  void ReluForward(const float* x, float* y, int64_t n) override;
  void ReluBackward(const float* x, const float* dy, float* dx, int64_t n) override;

  void Multiply(const float* a, const float* b, float* y, int64_t n) override;
  void Copy(const float* x, float* y, int64_t n) override;
  void DropoutMask(uint64_t seed, uint32_t threshold, float scale, float* mask, int64_t n) override;
  void ScaledSum(float alpha, const float* a, float beta, const float* b, float* y,
                 int64_t n) override;

  void Conv2DForward(const float* x, const float* w, const float* b, float* y,
                     const Conv2DShape& shape, int64_t batch) override;
  void Conv2DBackwardInput(const float* dy, const float* w, float* dx, const Conv2DShape& shape,
                           int64_t batch) override;
  void Conv2DBackwardWeights(const float* x, const float* dy, float* dw, const Conv2DShape& shape,
                             int64_t batch) override;
  void MaxPool2x2Forward(const float* x, float* y, int32_t* argmax, int64_t batch, int64_t height,
                         int64_t width, int64_t channels) override;
  void MaxPool2x2Backward(const float* dy, const int32_t* argmax, float* dx, int64_t batch,
                          int64_t height, int64_t width, int64_t channels) override;

  void ColumnMoments(const float* x, float* mean, float* variance, int64_t rows,
                     int64_t channels) override;
  void BatchNormForward(const float* x, const float* mean, const float* variance,
                        const float* gamma, const float* beta, double epsilon, float* y,
                        int64_t rows, int64_t channels) override;
  void BatchNormBackward(const float* x, const float* dy, const float* mean, const float* variance,
                         const float* gamma, double epsilon, float* dgamma, float* dbeta, float* dx,
                         int64_t rows, int64_t channels) override;

  float SoftmaxCrossEntropy(const float* logits, const int32_t* labels, float* dlogits,
                            int64_t batch, int64_t classes) override;
  int64_t ArgmaxCorrect(const float* logits, const int32_t* labels, int64_t batch,
                        int64_t classes) override;

 private:
  // Runs body() (returning Status) with this GPU current, unless an error
  // is already recorded; records body's failure, prefixed with the device
  // and `method`.
  template <typename Fn>
  void Run(const char* method, Fn body);

  // Column-major c (M,N) = op_a(a) (M,K) * op_b(b) (K,N) on cuBLAS.
  Status Gemm(cublasOperation_t op_a, cublasOperation_t op_b, int64_t m, int64_t n, int64_t k,
              const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);
  // ones_, holding at least n ones.
  StatusOr<const float*> Ones(int64_t n);
  // filter_, holding at least (R,S,C,K) floats.
  StatusOr<float*> FilterScratch(const Conv2DShape& shape);

  const int device_index_;
  const std::string device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  std::unique_ptr<GpuMemory> memory_;
  std::unique_ptr<CudnnConv> conv_;         // uses memory_ and stream_
  std::unique_ptr<PinnedStaging> staging_;  // host <-> GPU copies, on stream_
  // Scratch in device memory, grown as needed.
  std::unique_ptr<DeviceBuffer> ones_;      // BiasBackward's ones vector
  int64_t ones_count_ = 0;                  // leading elements of ones_ set to 1
  std::unique_ptr<DeviceBuffer> filter_;    // a KRSC filter or its gradient
  std::unique_ptr<DeviceBuffer> row_loss_;  // SoftmaxCrossEntropy's (B)
  std::unique_ptr<DeviceBuffer> bn_sums_;   // batch norm's 4C doubles
  std::unique_ptr<DeviceBuffer> bn_scale_;  // and 2C floats
  std::unique_ptr<DeviceBuffer> correct_;   // ArgmaxCorrect's counter
  Status error_;                            // the first failure since the last TakeError()
};

// cuBLAS takes int sizes.
Status CheckIntRange(std::initializer_list<int64_t> sizes) {
  for (int64_t v : sizes) {
    if (v > std::numeric_limits<int>::max()) {
      return InvalidArgument("size " + std::to_string(v) + " is beyond cuBLAS's 32-bit range");
    }
  }
  return Status::OK();
}

GpuKernels::GpuKernels(int device_index)
    : device_index_(device_index), device_("gpu:" + std::to_string(device_index)) {}

Status GpuKernels::Init(const KernelsOptions& options) {
  PST_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_index_));
  size_t free_bytes = 0, total_bytes = 0;
  PST_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  memory_ = std::make_unique<GpuMemory>(
      device_index_, device_,
      static_cast<size_t>(options.gpu_memory_fraction * static_cast<double>(total_bytes)));
  // Non-blocking: the stream does not wait for work on the legacy default
  // stream, which other code in the process may use.
  PST_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // cuBLAS's default math mode keeps float32 GEMMs in float32 (TF32 is
  // opt-in), which the tolerance tests rely on.
  PST_CUDA_RETURN_IF_ERROR(cublasCreate(&blas_));
  PST_CUDA_RETURN_IF_ERROR(cublasSetStream(blas_, stream_));
  PST_ASSIGN_OR_RETURN(conv_, CudnnConv::Create(stream_, memory_.get()));
  staging_ = std::make_unique<PinnedStaging>(stream_);
  return Status::OK();
}

GpuKernels::~GpuKernels() {
  // Nobody is left to report a failure to here.
  if (cudaSetDevice(device_index_) == cudaSuccess && stream_ != nullptr) {
    cudaStreamSynchronize(stream_);  // queued work may use the scratch
  }
  conv_.reset();
  staging_.reset();
  if (blas_ != nullptr) cublasDestroy(blas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  cudaGetLastError();
}

template <typename Fn>
void GpuKernels::Run(const char* method, Fn body) {
  if (!error_.ok()) return;
  const Status status = [&]() -> Status {
    PST_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_index_));
    return body();
  }();
  if (!status.ok()) {
    error_ = Status(status.code(), device_ + " " + method + ": " + status.message());
  }
}

Status GpuKernels::TakeError() {
  Status error = std::move(error_);
  error_ = Status::OK();
  return error;
}

StatusOr<std::unique_ptr<DeviceBuffer>> GpuKernels::Allocate(size_t bytes) {
  return memory_->Allocate(bytes);
}

void GpuKernels::CopyToDevice(const void* host_src, void* device_dst, size_t bytes) {
  Run("CopyToDevice", [&] { return staging_->ToDevice(host_src, device_dst, bytes); });
}

void GpuKernels::CopyToHost(const void* device_src, void* host_dst, size_t bytes) {
  Run("CopyToHost", [&] { return staging_->ToHost(device_src, host_dst, bytes); });
}

Status GpuKernels::Gemm(cublasOperation_t op_a, cublasOperation_t op_b, int64_t m, int64_t n,
                        int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                        float* c, int64_t ldc) {
  if (m == 0 || n == 0) return Status::OK();  // an empty result
  PST_RETURN_IF_ERROR(CheckIntRange({m, n, k, lda, ldb, ldc}));
  const float alpha = 1.0f, beta = 0.0f;  // c is overwritten
  PST_CUDA_RETURN_IF_ERROR(cublasSgemm(blas_, op_a, op_b, static_cast<int>(m), static_cast<int>(n),
                                       static_cast<int>(k), &alpha, a, static_cast<int>(lda), b,
                                       static_cast<int>(ldb), &beta, c, static_cast<int>(ldc)));
  return Status::OK();
}

void GpuKernels::MatmulForward(const float* x, const float* w, const float* b, float* y,
                               int64_t batch, int64_t in, int64_t out) {
  Run("MatmulForward", [&]() -> Status {
    // y^T (OUT,B) = w^T (OUT,IN) * x^T (IN,B).
    PST_RETURN_IF_ERROR(Gemm(CUBLAS_OP_N, CUBLAS_OP_N, out, batch, in, w, out, x, in, y, out));
    return CudaAddBias(stream_, y, b, batch, out);
  });
}

void GpuKernels::MatmulBackwardInput(const float* dy, const float* w, float* dx, int64_t batch,
                                     int64_t in, int64_t out) {
  Run("MatmulBackwardInput", [&] {
    // dx^T (IN,B) = w (IN,OUT) * dy^T (OUT,B); w is w^T's transpose.
    return Gemm(CUBLAS_OP_T, CUBLAS_OP_N, in, batch, out, w, out, dy, out, dx, in);
  });
}

void GpuKernels::MatmulBackwardWeights(const float* x, const float* dy, float* dw, int64_t batch,
                                       int64_t in, int64_t out) {
  Run("MatmulBackwardWeights", [&] {
    // dw^T (OUT,IN) = dy^T (OUT,B) * x (B,IN); x is x^T's transpose.
    return Gemm(CUBLAS_OP_N, CUBLAS_OP_T, out, in, batch, dy, out, x, in, dw, out);
  });
}

StatusOr<const float*> GpuKernels::Ones(int64_t n) {
  if (n > ones_count_) {
    PST_RETURN_IF_ERROR(memory_->Reserve(n * sizeof(float), &ones_));
    PST_RETURN_IF_ERROR(CudaFill(stream_, ones_->f32(), 1.0f, n));
    ones_count_ = n;
  }
  return ones_->f32();
}

void GpuKernels::BiasBackward(const float* dy, float* db, int64_t batch, int64_t out) {
  Run("BiasBackward", [&]() -> Status {
    if (out == 0) return Status::OK();
    if (batch == 0) {  // cuBLAS would leave db untouched
      PST_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(db, 0, out * sizeof(float), stream_));
      return Status::OK();
    }
    PST_RETURN_IF_ERROR(CheckIntRange({batch, out}));
    PST_ASSIGN_OR_RETURN(const float* ones, Ones(batch));
    // db (OUT) = dy^T (OUT,B) * ones (B): the column sums of dy.
    const float alpha = 1.0f, beta = 0.0f;
    PST_CUDA_RETURN_IF_ERROR(cublasSgemv(blas_, CUBLAS_OP_N, static_cast<int>(out),
                                         static_cast<int>(batch), &alpha, dy, static_cast<int>(out),
                                         ones, 1, &beta, db, 1));
    return Status::OK();
  });
}

void GpuKernels::SigmoidForward(const float* x, float* y, int64_t n) {
  Run("SigmoidForward", [&] { return CudaSigmoidForward(stream_, x, y, n); });
}

void GpuKernels::SigmoidBackward(const float* y, const float* dy, float* dx, int64_t n) {
  Run("SigmoidBackward", [&] { return CudaSigmoidBackward(stream_, y, dy, dx, n); });
}

void GpuKernels::ReluForward(const float* x, float* y, int64_t n) {
  Run("ReluForward", [&] { return CudaReluForward(stream_, x, y, n); });
}

void GpuKernels::ReluBackward(const float* x, const float* dy, float* dx, int64_t n) {
  Run("ReluBackward", [&] { return CudaReluBackward(stream_, x, dy, dx, n); });
}

void GpuKernels::Multiply(const float* a, const float* b, float* y, int64_t n) {
  Run("Multiply", [&] { return CudaMultiply(stream_, a, b, y, n); });
}

void GpuKernels::DropoutMask(uint64_t seed, uint32_t threshold, float scale, float* mask,
                             int64_t n) {
  Run("DropoutMask", [&] { return CudaDropoutMask(stream_, seed, threshold, scale, mask, n); });
}

void GpuKernels::ScaledSum(float alpha, const float* a, float beta, const float* b, float* y,
                           int64_t n) {
  Run("ScaledSum", [&] { return CudaScaledSum(stream_, alpha, a, beta, b, y, n); });
}

void GpuKernels::Copy(const float* x, float* y, int64_t n) {
  Run("Copy", [&]() -> Status {
    if (n <= 0) return Status::OK();
    PST_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
    return Status::OK();
  });
}

StatusOr<float*> GpuKernels::FilterScratch(const Conv2DShape& shape) {
  const int64_t size =
      shape.filter_height * shape.filter_width * shape.in_channels * shape.out_channels;
  PST_RETURN_IF_ERROR(memory_->Reserve(size * sizeof(float), &filter_));
  return filter_->f32();
}

// The filters: Kernels' HWIO w is the row-major (R*S*C, K) matrix whose
// transpose, (K, R*S*C), is cuDNN's KRSC layout.

void GpuKernels::Conv2DForward(const float* x, const float* w, const float* b, float* y,
                               const Conv2DShape& shape, int64_t batch) {
  Run("Conv2DForward", [&]() -> Status {
    const int64_t rsc = shape.filter_height * shape.filter_width * shape.in_channels;
    PST_ASSIGN_OR_RETURN(float* w_krsc, FilterScratch(shape));
    PST_RETURN_IF_ERROR(CudaTranspose(stream_, w, w_krsc, rsc, shape.out_channels));
    PST_RETURN_IF_ERROR(conv_->Forward(x, w_krsc, y, shape, batch));
    // y is the (B*P*Q, K) matrix: NHWC.
    return CudaAddBias(stream_, y, b, batch * shape.out_height() * shape.out_width(),
                       shape.out_channels);
  });
}

void GpuKernels::Conv2DBackwardInput(const float* dy, const float* w, float* dx,
                                     const Conv2DShape& shape, int64_t batch) {
  Run("Conv2DBackwardInput", [&]() -> Status {
    const int64_t rsc = shape.filter_height * shape.filter_width * shape.in_channels;
    PST_ASSIGN_OR_RETURN(float* w_krsc, FilterScratch(shape));
    PST_RETURN_IF_ERROR(CudaTranspose(stream_, w, w_krsc, rsc, shape.out_channels));
    return conv_->BackwardData(dy, w_krsc, dx, shape, batch);
  });
}

void GpuKernels::Conv2DBackwardWeights(const float* x, const float* dy, float* dw,
                                       const Conv2DShape& shape, int64_t batch) {
  Run("Conv2DBackwardWeights", [&]() -> Status {
    const int64_t rsc = shape.filter_height * shape.filter_width * shape.in_channels;
    PST_ASSIGN_OR_RETURN(float* dw_krsc, FilterScratch(shape));
    PST_RETURN_IF_ERROR(conv_->BackwardFilter(x, dy, dw_krsc, shape, batch));
    return CudaTranspose(stream_, dw_krsc, dw, shape.out_channels, rsc);
  });
}

void GpuKernels::MaxPool2x2Forward(const float* x, float* y, int32_t* argmax, int64_t batch,
                                   int64_t height, int64_t width, int64_t channels) {
  Run("MaxPool2x2Forward",
      [&] { return CudaMaxPool2x2Forward(stream_, x, y, argmax, batch, height, width, channels); });
}

void GpuKernels::MaxPool2x2Backward(const float* dy, const int32_t* argmax, float* dx,
                                    int64_t batch, int64_t height, int64_t width,
                                    int64_t channels) {
  Run("MaxPool2x2Backward", [&] {
    return CudaMaxPool2x2Backward(stream_, dy, argmax, dx, batch, height, width, channels);
  });
}

void GpuKernels::ColumnMoments(const float* x, float* mean, float* variance, int64_t rows,
                               int64_t channels) {
  Run("ColumnMoments", [&]() -> Status {
    PST_RETURN_IF_ERROR(memory_->Reserve(4 * channels * sizeof(double), &bn_sums_));
    return CudaColumnMoments(stream_, x, mean, variance, static_cast<double*>(bn_sums_->data()),
                             rows, channels);
  });
}

void GpuKernels::BatchNormForward(const float* x, const float* mean, const float* variance,
                                  const float* gamma, const float* beta, double epsilon, float* y,
                                  int64_t rows, int64_t channels) {
  Run("BatchNormForward", [&]() -> Status {
    PST_RETURN_IF_ERROR(memory_->Reserve(2 * channels * sizeof(float), &bn_scale_));
    return CudaBatchNormForward(stream_, x, mean, variance, gamma, beta, epsilon, y,
                                bn_scale_->f32(), rows, channels);
  });
}

void GpuKernels::BatchNormBackward(const float* x, const float* dy, const float* mean,
                                   const float* variance, const float* gamma, double epsilon,
                                   float* dgamma, float* dbeta, float* dx, int64_t rows,
                                   int64_t channels) {
  Run("BatchNormBackward", [&]() -> Status {
    PST_RETURN_IF_ERROR(memory_->Reserve(4 * channels * sizeof(double), &bn_sums_));
    return CudaBatchNormBackward(stream_, x, dy, mean, variance, gamma, epsilon, dgamma, dbeta, dx,
                                 static_cast<double*>(bn_sums_->data()), rows, channels);
  });
}

float GpuKernels::SoftmaxCrossEntropy(const float* logits, const int32_t* labels, float* dlogits,
                                      int64_t batch, int64_t classes) {
  float mean = std::numeric_limits<float>::quiet_NaN();
  Run("SoftmaxCrossEntropy", [&]() -> Status {
    PST_RETURN_IF_ERROR(memory_->Reserve(batch * sizeof(float), &row_loss_));
    PST_RETURN_IF_ERROR(CudaSoftmaxCrossEntropy(stream_, logits, labels, dlogits, row_loss_->f32(),
                                                batch, classes));
    std::vector<float> row_loss(batch);
    PST_RETURN_IF_ERROR(
        staging_->ToHost(row_loss_->data(), row_loss.data(), batch * sizeof(float)));
    double sum = 0.0;  // double, in row order, as on the CPU
    for (float loss : row_loss) sum += loss;
    mean = static_cast<float>(sum / static_cast<double>(batch));
    return Status::OK();
  });
  return mean;
}

int64_t GpuKernels::ArgmaxCorrect(const float* logits, const int32_t* labels, int64_t batch,
                                  int64_t classes) {
  unsigned long long correct = 0;  // NOLINT(runtime/int): atomicAdd's type
  Run("ArgmaxCorrect", [&]() -> Status {
    PST_RETURN_IF_ERROR(memory_->Reserve(sizeof(correct), &correct_));
    auto* counter = static_cast<unsigned long long*>(  // NOLINT(runtime/int)
        correct_->data());
    PST_RETURN_IF_ERROR(CudaArgmaxCorrect(stream_, logits, labels, counter, batch, classes));
    return staging_->ToHost(counter, &correct, sizeof(correct));
  });
  return static_cast<int64_t>(correct);
}

}  // namespace

StatusOr<std::unique_ptr<Kernels>> MakeGpuKernels(int device_index, const KernelsOptions& options) {
  const std::string unusable = "device 'gpu:" + std::to_string(device_index) + "' is not usable: ";
  if (!(options.gpu_memory_fraction > 0.0 && options.gpu_memory_fraction <= 1.0)) {
    return InvalidArgument("gpu_memory_fraction must be in (0, 1], got " +
                           std::to_string(options.gpu_memory_fraction) +
                           " for device 'gpu:" + std::to_string(device_index) + "'");
  }
  int count = 0;
  const Status counted = [&]() -> Status {
    PST_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
    return Status::OK();
  }();
  if (!counted.ok() || count == 0) {
    return FailedPrecondition(unusable + "no CUDA GPU or driver" +
                              (counted.ok() ? "" : " (" + counted.message() + ")") +
                              "; use device 'cpu'");
  }
  if (device_index < 0 || device_index >= count) {
    return FailedPrecondition(unusable + "this process sees " + std::to_string(count) +
                              " CUDA GPU(s), gpu:0 to gpu:" + std::to_string(count - 1) +
                              " (CUDA_VISIBLE_DEVICES applies); use one of them or device 'cpu'");
  }
  auto kernels = std::make_unique<GpuKernels>(device_index);
  const Status init = kernels->Init(options);
  if (!init.ok()) return Status(init.code(), unusable + init.message());
  return std::unique_ptr<Kernels>(std::move(kernels));
}

}  // namespace pst

// CpuKernels: the Eigen back end of Kernels, and the reference the GPU back
// end is tested against. Matrix products go through Eigen's blocked,
// vectorised GEMM on Eigen::Map views of the caller's buffers (no copies).
// A convolution is one such GEMM over the whole batch, on an im2col matrix
// the object keeps as scratch (grown to the largest convolution seen, then
// reused). Single-threaded: parallelism comes from running one model per
// worker thread.
#ifndef PST_KERNELS_CPU_KERNELS_H_
#define PST_KERNELS_CPU_KERNELS_H_

#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace pst {

class CpuKernels : public Kernels {
 public:
  CpuKernels() = default;

  const std::string& device() const override { return device_; }
  bool host_memory() const override { return true; }

  StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(size_t bytes) override;
  void CopyToDevice(const void* host_src, void* device_dst, size_t bytes) override;
  void CopyToHost(const void* device_src, void* host_dst, size_t bytes) override;
  Status TakeError() override { return Status::OK(); }

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

  // In cpu_conv_kernels.cc.
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
  // The im2col matrix of the current convolution, (B*P*Q, R*S*C).
  float* ColumnBuffer(const Conv2DShape& shape, int64_t batch);

  const std::string device_ = "cpu";
  std::vector<float> columns_;
};

}  // namespace pst

#endif  // PST_KERNELS_CPU_KERNELS_H_

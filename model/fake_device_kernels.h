// FakeDeviceKernels (tests only): a Kernels test double standing in for a
// device back end, as leveldb's in-memory Env stands in for a file system.
// It computes with CpuKernels, so its results are the CPU's, but it says
// host_memory() == false, so a caller must move everything through
// Allocate() and the copies just as it must for a GPU. And it checks what a
// GPU would only crash on: every pointer a kernel gets must lie, with all
// the bytes the call's shapes imply, inside one live buffer it handed out (a
// host pointer reaching a GPU kernel is an illegal address), and each copy
// must go between host memory and such a buffer. A violation, like a failed
// CUDA call, skips the call and is recorded for TakeError(). It counts
// allocations and copied bytes, and can inject a failure.
//
// Its buffers must be freed before it is destroyed (CHECKed). One thread at
// a time, like every Kernels.
#ifndef PST_MODEL_FAKE_DEVICE_KERNELS_H_
#define PST_MODEL_FAKE_DEVICE_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kernels/cpu_kernels.h"
#include "kernels/kernels.h"

namespace pst {

class FakeDeviceKernels : public Kernels {
 public:
  explicit FakeDeviceKernels(std::string device = "fake:0");
  ~FakeDeviceKernels() override;

  // What the fake has seen so far.
  int64_t allocations() const { return allocations_; }
  size_t live_bytes() const { return live_bytes_; }
  int64_t bytes_to_device() const { return bytes_to_device_; }
  int64_t bytes_to_host() const { return bytes_to_host_; }

  // Makes the next TakeError() return `status`, as if a kernel had just
  // failed (unless a failure is already pending: the first one wins). Its
  // own failures name the device first, as GpuKernels' do.
  void InjectError(Status status);
  // Allocate() fails with ResourceExhausted when the live buffers would
  // then exceed `bytes` in all (as a GPU's memory cap makes it).
  void set_memory_limit(size_t bytes) { memory_limit_ = bytes; }

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
  class Buffer;

  // Whether [p, p + count * 4) lies inside one live buffer (4: float and
  // int32 alike); if not, records the failure, naming `call` and `arg`.
  bool OnDevice(const char* call, const char* arg, const void* p, int64_t count);
  // For copies: whether [p, p + bytes) is in a live buffer, or touches none.
  bool InBuffer(const void* p, size_t bytes) const;
  bool OutsideBuffers(const void* p, size_t bytes) const;
  void Fail(const std::string& message);

  const std::string device_;
  CpuKernels cpu_;
  std::map<const char*, size_t> buffers_;  // live buffers: start -> bytes
  size_t live_bytes_ = 0;                  // in buffers_
  size_t memory_limit_ = SIZE_MAX;
  Status error_;  // the first failure not taken
  int64_t allocations_ = 0;
  int64_t bytes_to_device_ = 0;
  int64_t bytes_to_host_ = 0;
};

}  // namespace pst

#endif  // PST_MODEL_FAKE_DEVICE_KERNELS_H_

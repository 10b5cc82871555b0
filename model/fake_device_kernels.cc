#include "model/fake_device_kernels.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <utility>

namespace pst {

// A CpuKernels buffer that the fake tracks while it lives.
class FakeDeviceKernels::Buffer : public DeviceBuffer {
 public:
  Buffer(FakeDeviceKernels& owner, std::unique_ptr<DeviceBuffer> memory)
      : owner_(owner), memory_(std::move(memory)) {
    owner_.buffers_[static_cast<const char*>(data())] = bytes();
    owner_.live_bytes_ += bytes();
  }
  ~Buffer() override {
    owner_.buffers_.erase(static_cast<const char*>(data()));
    owner_.live_bytes_ -= bytes();
  }
  void* data() override { return memory_->data(); }
  size_t bytes() const override { return memory_->bytes(); }

 private:
  FakeDeviceKernels& owner_;
  const std::unique_ptr<DeviceBuffer> memory_;
};

FakeDeviceKernels::FakeDeviceKernels(std::string device) : device_(std::move(device)) {}

FakeDeviceKernels::~FakeDeviceKernels() {
  CHECK(buffers_.empty()) << buffers_.size() << " buffers outlive their FakeDeviceKernels";
}

void FakeDeviceKernels::InjectError(Status status) {
  CHECK(!status.ok());
  if (error_.ok()) error_ = std::move(status);
}

Status FakeDeviceKernels::TakeError() {
  Status error = std::move(error_);
  error_ = Status::OK();
  return error;
}

void FakeDeviceKernels::Fail(const std::string& message) {
  if (error_.ok()) error_ = Internal(device_ + ": " + message);
}

StatusOr<std::unique_ptr<DeviceBuffer>> FakeDeviceKernels::Allocate(size_t bytes) {
  if (bytes > memory_limit_ - std::min(live_bytes_, memory_limit_)) {
    return ResourceExhausted(device_ + ": out of memory allocating " + std::to_string(bytes) +
                             " bytes (" + std::to_string(live_bytes_) + " in use, limit " +
                             std::to_string(memory_limit_) + ")");
  }
  PST_ASSIGN_OR_RETURN(std::unique_ptr<DeviceBuffer> memory, cpu_.Allocate(bytes));
  ++allocations_;
  return std::unique_ptr<DeviceBuffer>(new Buffer(*this, std::move(memory)));
}

bool FakeDeviceKernels::InBuffer(const void* p, size_t bytes) const {
  const char* begin = static_cast<const char*>(p);
  auto it = buffers_.upper_bound(begin);  // the first buffer after p
  if (it == buffers_.begin()) return false;
  --it;
  return begin + bytes <= it->first + it->second;
}

bool FakeDeviceKernels::OutsideBuffers(const void* p, size_t bytes) const {
  const char* begin = static_cast<const char*>(p);
  auto it = buffers_.lower_bound(begin + bytes);  // starts at or past the end
  if (it == buffers_.begin()) return true;
  --it;
  return it->first + it->second <= begin;
}

bool FakeDeviceKernels::OnDevice(const char* call, const char* arg, const void* p, int64_t count) {
  if (count == 0 || InBuffer(p, count * 4)) return true;
  std::ostringstream message;
  message << call << ": " << arg << " (" << p << ", " << count
          << " elements) is not in device memory";
  Fail(message.str());
  return false;
}

void FakeDeviceKernels::CopyToDevice(const void* host_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return;
  if (!OutsideBuffers(host_src, bytes) || !InBuffer(device_dst, bytes)) {
    Fail("CopyToDevice: not from host memory to device memory");
    return;
  }
  std::memcpy(device_dst, host_src, bytes);
  bytes_to_device_ += bytes;
}

void FakeDeviceKernels::CopyToHost(const void* device_src, void* host_dst, size_t bytes) {
  if (bytes == 0) return;
  if (!InBuffer(device_src, bytes) || !OutsideBuffers(host_dst, bytes)) {
    Fail("CopyToHost: not from device memory to host memory");
    return;
  }
  std::memcpy(host_dst, device_src, bytes);
  bytes_to_host_ += bytes;
}

void FakeDeviceKernels::MatmulForward(const float* x, const float* w, const float* b, float* y,
                                      int64_t batch, int64_t in, int64_t out) {
  const char* k = "MatmulForward";
  if (OnDevice(k, "x", x, batch * in) && OnDevice(k, "w", w, in * out) &&
      OnDevice(k, "b", b, out) && OnDevice(k, "y", y, batch * out)) {
    cpu_.MatmulForward(x, w, b, y, batch, in, out);
  }
}

void FakeDeviceKernels::MatmulBackwardInput(const float* dy, const float* w, float* dx,
                                            int64_t batch, int64_t in, int64_t out) {
  const char* k = "MatmulBackwardInput";
  if (OnDevice(k, "dy", dy, batch * out) && OnDevice(k, "w", w, in * out) &&
      OnDevice(k, "dx", dx, batch * in)) {
    cpu_.MatmulBackwardInput(dy, w, dx, batch, in, out);
  }
}

void FakeDeviceKernels::MatmulBackwardWeights(const float* x, const float* dy, float* dw,
                                              int64_t batch, int64_t in, int64_t out) {
  const char* k = "MatmulBackwardWeights";
  if (OnDevice(k, "x", x, batch * in) && OnDevice(k, "dy", dy, batch * out) &&
      OnDevice(k, "dw", dw, in * out)) {
    cpu_.MatmulBackwardWeights(x, dy, dw, batch, in, out);
  }
}

void FakeDeviceKernels::BiasBackward(const float* dy, float* db, int64_t batch, int64_t out) {
  const char* k = "BiasBackward";
  if (OnDevice(k, "dy", dy, batch * out) && OnDevice(k, "db", db, out)) {
    cpu_.BiasBackward(dy, db, batch, out);
  }
}

void FakeDeviceKernels::SigmoidForward(const float* x, float* y, int64_t n) {
  const char* k = "SigmoidForward";
  if (OnDevice(k, "x", x, n) && OnDevice(k, "y", y, n)) {
    cpu_.SigmoidForward(x, y, n);
  }
}

void FakeDeviceKernels::SigmoidBackward(const float* y, const float* dy, float* dx, int64_t n) {
  const char* k = "SigmoidBackward";
  if (OnDevice(k, "y", y, n) && OnDevice(k, "dy", dy, n) && OnDevice(k, "dx", dx, n)) {
    cpu_.SigmoidBackward(y, dy, dx, n);
  }
}

void FakeDeviceKernels::ReluForward(const float* x, float* y, int64_t n) {
  const char* k = "ReluForward";
  if (OnDevice(k, "x", x, n) && OnDevice(k, "y", y, n)) {
    cpu_.ReluForward(x, y, n);
  }
}

void FakeDeviceKernels::ReluBackward(const float* x, const float* dy, float* dx, int64_t n) {
  const char* k = "ReluBackward";
  if (OnDevice(k, "x", x, n) && OnDevice(k, "dy", dy, n) && OnDevice(k, "dx", dx, n)) {
    cpu_.ReluBackward(x, dy, dx, n);
  }
}

void FakeDeviceKernels::Multiply(const float* a, const float* b, float* y, int64_t n) {
  const char* k = "Multiply";
  if (OnDevice(k, "a", a, n) && OnDevice(k, "b", b, n) && OnDevice(k, "y", y, n)) {
    cpu_.Multiply(a, b, y, n);
  }
}

void FakeDeviceKernels::DropoutMask(uint64_t seed, uint32_t threshold, float scale, float* mask,
                                    int64_t n) {
  if (OnDevice("DropoutMask", "mask", mask, n)) cpu_.DropoutMask(seed, threshold, scale, mask, n);
}

void FakeDeviceKernels::ScaledSum(float alpha, const float* a, float beta, const float* b, float* y,
                                  int64_t n) {
  const char* k = "ScaledSum";
  if (OnDevice(k, "a", a, n) && OnDevice(k, "b", b, n) && OnDevice(k, "y", y, n)) {
    cpu_.ScaledSum(alpha, a, beta, b, y, n);
  }
}

void FakeDeviceKernels::Copy(const float* x, float* y, int64_t n) {
  if (OnDevice("Copy", "x", x, n) && OnDevice("Copy", "y", y, n)) {
    cpu_.Copy(x, y, n);
  }
}

namespace {

// Element counts of a convolution's operands.
struct ConvCounts {
  int64_t x, w, y;
};

ConvCounts Counts(const Conv2DShape& s, int64_t batch) {
  return {batch * s.height * s.width * s.in_channels,
          s.filter_height * s.filter_width * s.in_channels * s.out_channels,
          batch * s.out_height() * s.out_width() * s.out_channels};
}

}  // namespace

void FakeDeviceKernels::Conv2DForward(const float* x, const float* w, const float* b, float* y,
                                      const Conv2DShape& shape, int64_t batch) {
  const char* k = "Conv2DForward";
  const ConvCounts n = Counts(shape, batch);
  if (OnDevice(k, "x", x, n.x) && OnDevice(k, "w", w, n.w) &&
      OnDevice(k, "b", b, shape.out_channels) && OnDevice(k, "y", y, n.y)) {
    cpu_.Conv2DForward(x, w, b, y, shape, batch);
  }
}

void FakeDeviceKernels::Conv2DBackwardInput(const float* dy, const float* w, float* dx,
                                            const Conv2DShape& shape, int64_t batch) {
  const char* k = "Conv2DBackwardInput";
  const ConvCounts n = Counts(shape, batch);
  if (OnDevice(k, "dy", dy, n.y) && OnDevice(k, "w", w, n.w) && OnDevice(k, "dx", dx, n.x)) {
    cpu_.Conv2DBackwardInput(dy, w, dx, shape, batch);
  }
}

void FakeDeviceKernels::Conv2DBackwardWeights(const float* x, const float* dy, float* dw,
                                              const Conv2DShape& shape, int64_t batch) {
  const char* k = "Conv2DBackwardWeights";
  const ConvCounts n = Counts(shape, batch);
  if (OnDevice(k, "x", x, n.x) && OnDevice(k, "dy", dy, n.y) && OnDevice(k, "dw", dw, n.w)) {
    cpu_.Conv2DBackwardWeights(x, dy, dw, shape, batch);
  }
}

void FakeDeviceKernels::MaxPool2x2Forward(const float* x, float* y, int32_t* argmax, int64_t batch,
                                          int64_t height, int64_t width, int64_t channels) {
  const char* k = "MaxPool2x2Forward";
  const int64_t in = batch * height * width * channels;
  const int64_t out = batch * (height / 2) * (width / 2) * channels;
  if (OnDevice(k, "x", x, in) && OnDevice(k, "y", y, out) && OnDevice(k, "argmax", argmax, out)) {
    cpu_.MaxPool2x2Forward(x, y, argmax, batch, height, width, channels);
  }
}

void FakeDeviceKernels::MaxPool2x2Backward(const float* dy, const int32_t* argmax, float* dx,
                                           int64_t batch, int64_t height, int64_t width,
                                           int64_t channels) {
  const char* k = "MaxPool2x2Backward";
  const int64_t in = batch * height * width * channels;
  const int64_t out = batch * (height / 2) * (width / 2) * channels;
  if (OnDevice(k, "dy", dy, out) && OnDevice(k, "argmax", argmax, out) &&
      OnDevice(k, "dx", dx, in)) {
    cpu_.MaxPool2x2Backward(dy, argmax, dx, batch, height, width, channels);
  }
}

void FakeDeviceKernels::ColumnMoments(const float* x, float* mean, float* variance, int64_t rows,
                                      int64_t channels) {
  const char* k = "ColumnMoments";
  if (OnDevice(k, "x", x, rows * channels) && OnDevice(k, "mean", mean, channels) &&
      OnDevice(k, "variance", variance, channels)) {
    cpu_.ColumnMoments(x, mean, variance, rows, channels);
  }
}

void FakeDeviceKernels::BatchNormForward(const float* x, const float* mean, const float* variance,
                                         const float* gamma, const float* beta, double epsilon,
                                         float* y, int64_t rows, int64_t channels) {
  const char* k = "BatchNormForward";
  if (OnDevice(k, "x", x, rows * channels) && OnDevice(k, "mean", mean, channels) &&
      OnDevice(k, "variance", variance, channels) && OnDevice(k, "gamma", gamma, channels) &&
      OnDevice(k, "beta", beta, channels) && OnDevice(k, "y", y, rows * channels)) {
    cpu_.BatchNormForward(x, mean, variance, gamma, beta, epsilon, y, rows, channels);
  }
}

void FakeDeviceKernels::BatchNormBackward(const float* x, const float* dy, const float* mean,
                                          const float* variance, const float* gamma, double epsilon,
                                          float* dgamma, float* dbeta, float* dx, int64_t rows,
                                          int64_t channels) {
  const char* k = "BatchNormBackward";
  if (OnDevice(k, "x", x, rows * channels) && OnDevice(k, "dy", dy, rows * channels) &&
      OnDevice(k, "mean", mean, channels) && OnDevice(k, "variance", variance, channels) &&
      OnDevice(k, "gamma", gamma, channels) && OnDevice(k, "dgamma", dgamma, channels) &&
      OnDevice(k, "dbeta", dbeta, channels) &&
      (dx == nullptr || OnDevice(k, "dx", dx, rows * channels))) {
    cpu_.BatchNormBackward(x, dy, mean, variance, gamma, epsilon, dgamma, dbeta, dx, rows,
                           channels);
  }
}

float FakeDeviceKernels::SoftmaxCrossEntropy(const float* logits, const int32_t* labels,
                                             float* dlogits, int64_t batch, int64_t classes) {
  const char* k = "SoftmaxCrossEntropy";
  if (OnDevice(k, "logits", logits, batch * classes) && OnDevice(k, "labels", labels, batch) &&
      (dlogits == nullptr || OnDevice(k, "dlogits", dlogits, batch * classes))) {
    return cpu_.SoftmaxCrossEntropy(logits, labels, dlogits, batch, classes);
  }
  return 0;
}

int64_t FakeDeviceKernels::ArgmaxCorrect(const float* logits, const int32_t* labels, int64_t batch,
                                         int64_t classes) {
  const char* k = "ArgmaxCorrect";
  if (OnDevice(k, "logits", logits, batch * classes) && OnDevice(k, "labels", labels, batch)) {
    return cpu_.ArgmaxCorrect(logits, labels, batch, classes);
  }
  return 0;
}

}  // namespace pst

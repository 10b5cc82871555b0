#include "kernels/cpu_kernels.h"

#include <glog/logging.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/dropout_hash.h"

namespace pst {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;
using ConstRowVectorMap = Eigen::Map<const Eigen::RowVectorXf>;
using RowVectorMap = Eigen::Map<Eigen::RowVectorXf>;

}  // namespace

void CpuKernels::MatmulForward(const float* x, const float* w, const float* b, float* y,
                               int64_t batch, int64_t in, int64_t out) {
  MatrixMap ym(y, batch, out);
  // noalias(): y never overlaps x or w, so Eigen may write the product
  // straight into y instead of into a temporary.
  ym.noalias() = ConstMatrixMap(x, batch, in) * ConstMatrixMap(w, in, out);
  ym.rowwise() += ConstRowVectorMap(b, out);
}

void CpuKernels::MatmulBackwardInput(const float* dy, const float* w, float* dx, int64_t batch,
                                     int64_t in, int64_t out) {
  MatrixMap(dx, batch, in).noalias() =
      ConstMatrixMap(dy, batch, out) * ConstMatrixMap(w, in, out).transpose();
}

void CpuKernels::MatmulBackwardWeights(const float* x, const float* dy, float* dw, int64_t batch,
                                       int64_t in, int64_t out) {
  MatrixMap(dw, in, out).noalias() =
      ConstMatrixMap(x, batch, in).transpose() * ConstMatrixMap(dy, batch, out);
}

void CpuKernels::BiasBackward(const float* dy, float* db, int64_t batch, int64_t out) {
  // Row after row into db: the inner loop runs along a row's contiguous
  // columns and vectorizes, where Eigen's column sums of a row-major matrix
  // stride across rows.
  float* __restrict sums = db;
  std::fill(sums, sums + out, 0.0f);
  for (int64_t i = 0; i < batch; ++i) {
    const float* __restrict row = dy + i * out;
    for (int64_t k = 0; k < out; ++k) sums[k] += row[k];
  }
}

void CpuKernels::SigmoidForward(const float* x, float* y, int64_t n) {
  // exp(-x) overflows to +inf for x < -88 and the quotient is then exactly 0,
  // which is the correctly rounded sigmoid there.
  ArrayMap(y, n) = (1.0f + (-ConstArrayMap(x, n)).exp()).inverse();
}

void CpuKernels::SigmoidBackward(const float* y, const float* dy, float* dx, int64_t n) {
  ConstArrayMap ya(y, n);
  ArrayMap(dx, n) = ConstArrayMap(dy, n) * ya * (1.0f - ya);
}

void CpuKernels::ReluForward(const float* x, float* y, int64_t n) {
  ArrayMap(y, n) = ConstArrayMap(x, n).max(0.0f);
}

void CpuKernels::ReluBackward(const float* x, const float* dy, float* dx, int64_t n) {
  // Not select(): in Eigen 3.4 it is a scalar branch per element, which on
  // mixed signs mispredicts about every other time (8x slower than this).
  ArrayMap(dx, n) = ConstArrayMap(dy, n) * (ConstArrayMap(x, n) > 0.0f).cast<float>();
}

void CpuKernels::Multiply(const float* a, const float* b, float* y, int64_t n) {
  ArrayMap(y, n) = ConstArrayMap(a, n) * ConstArrayMap(b, n);
}

void CpuKernels::DropoutMask(uint64_t seed, uint32_t threshold, float scale, float* mask,
                             int64_t n) {
  for (int64_t i = 0; i < n; ++i) mask[i] = DropoutMaskValue(seed, i, threshold, scale);
}

void CpuKernels::ScaledSum(float alpha, const float* a, float beta, const float* b, float* y,
                           int64_t n) {
  ArrayMap(y, n) = alpha * ConstArrayMap(a, n) + beta * ConstArrayMap(b, n);
}

namespace {

// Host memory: the CPU back end's "device" memory, 64-byte aligned (a cache
// line, and every SIMD width Eigen uses) so that vectorised loops start
// aligned and a reduction's summation order does not depend on where the
// allocator happened to put the buffer.
class HostBuffer : public DeviceBuffer {
 public:
  explicit HostBuffer(size_t bytes) : bytes_(bytes), data_(new Line[bytes / sizeof(Line) + 1]) {}
  void* data() override { return data_.get(); }
  size_t bytes() const override { return bytes_; }

 private:
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  size_t bytes_;
  std::unique_ptr<Line[]> data_;
};

}  // namespace

StatusOr<std::unique_ptr<DeviceBuffer>> CpuKernels::Allocate(size_t bytes) {
  return std::unique_ptr<DeviceBuffer>(new HostBuffer(bytes));
}

void CpuKernels::CopyToDevice(const void* host_src, void* device_dst, size_t bytes) {
  if (bytes) std::memcpy(device_dst, host_src, bytes);
}

void CpuKernels::CopyToHost(const void* device_src, void* host_dst, size_t bytes) {
  if (bytes) std::memcpy(host_dst, device_src, bytes);
}

void CpuKernels::Copy(const float* x, float* y, int64_t n) { ArrayMap(y, n) = ConstArrayMap(x, n); }

float CpuKernels::SoftmaxCrossEntropy(const float* logits, const int32_t* labels, float* dlogits,
                                      int64_t batch, int64_t classes) {
  ConstMatrixMap z(logits, batch, classes);
  const float inv_batch = 1.0f / static_cast<float>(batch);
  double loss_sum = 0.0;  // double: the mean of many O(1) terms
  for (int64_t i = 0; i < batch; ++i) {
    const int32_t label = labels[i];
    DCHECK(label >= 0 && label < classes) << "label " << label;
    // Shifting by the row max keeps exp() from overflowing.
    const float max = z.row(i).maxCoeff();
    const float sum_exp = (z.row(i).array() - max).exp().sum();
    const float log_sum_exp = max + std::log(sum_exp);
    loss_sum += log_sum_exp - z(i, label);
    if (dlogits != nullptr) {
      RowVectorMap d(dlogits + i * classes, classes);
      d = ((z.row(i).array() - log_sum_exp).exp() * inv_batch).matrix();
      d(label) -= inv_batch;
    }
  }
  return static_cast<float>(loss_sum / static_cast<double>(batch));
}

int64_t CpuKernels::ArgmaxCorrect(const float* logits, const int32_t* labels, int64_t batch,
                                  int64_t classes) {
  ConstMatrixMap z(logits, batch, classes);
  int64_t correct = 0;
  for (int64_t i = 0; i < batch; ++i) {
    Eigen::Index arg = 0;
    z.row(i).maxCoeff(&arg);
    if (arg == labels[i]) ++correct;
  }
  return correct;
}

}  // namespace pst

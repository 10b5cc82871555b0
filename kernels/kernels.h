// Kernels: the float32 math the model layers run, behind one interface so
// that a CPU (Eigen) and a GPU back end can be swapped per worker.
//
// All buffers are dense, row-major and live in the back end's memory space
// (host memory for "cpu"). Each method states its shapes; callers guarantee
// them and that outputs do not alias inputs. Methods overwrite their outputs
// (they never accumulate into them).
//
// Thread safety: a Kernels object is used by one thread at a time.
#ifndef PST_KERNELS_KERNELS_H_
#define PST_KERNELS_KERNELS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace pst {

// The geometry of a 2-D convolution, less the batch size (passed separately).
// Activations are NHWC and filters HWIO, as in TensorFlow: x is (B,H,W,C),
// w is (R,S,C,K), y is (B,P,Q,K). Zero padding of `padding` pixels on every
// side and the same stride in both spatial dimensions.
struct Conv2DShape {
  int64_t height = 0, width = 0, in_channels = 0;  // H, W, C
  int64_t filter_height = 0, filter_width = 0;     // R, S
  int64_t out_channels = 0;                        // K
  int64_t stride = 1;
  int64_t padding = 0;

  int64_t out_height() const {  // P
    return (height + 2 * padding - filter_height) / stride + 1;
  }
  int64_t out_width() const {  // Q
    return (width + 2 * padding - filter_width) / stride + 1;
  }
};

// A block of a back end's memory (host memory for "cpu", device memory for
// "gpu:N"), freed with its owner. Allocate once, reuse across steps.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual void* data() = 0;
  virtual size_t bytes() const = 0;
  float* f32() { return static_cast<float*>(data()); }
  int32_t* i32() { return static_cast<int32_t*>(data()); }
};

// The implementations of device "cpu": oneDNN's kernels for the matrix
// products and convolutions (the rest as Eigen's), or Eigen's alone, the
// reference that the others are tested against.
enum class CpuKernelsKind { kOnednn, kEigen };

// kOnednn where the build has it (it picks its instruction set at run
// time), else kEigen.
CpuKernelsKind DefaultCpuKernels();
// The kinds this build has, the default first.
std::vector<CpuKernelsKind> AvailableCpuKernels();
// "onednn" or "eigen".
const char* CpuKernelsName(CpuKernelsKind kind);
// The kind `name` names ("auto": DefaultCpuKernels()); InvalidArgument,
// listing the names, for another.
StatusOr<CpuKernelsKind> ParseCpuKernels(const std::string& name);

// What a back end may take of its device.
struct KernelsOptions {
  // Cap on the device memory Allocate() hands out, as a fraction of the
  // device's total (GPU only).
  double gpu_memory_fraction = 1.0;
  // Which kernels "cpu" runs.
  CpuKernelsKind cpu_kernels = DefaultCpuKernels();
  // Threads of one oneDNN call (at least 1). One suits a worker process per
  // core; more, a single worker on a machine. The Eigen kernels are
  // single-threaded.
  int intra_op_threads = 1;
};

class Kernels {
 public:
  virtual ~Kernels() = default;

  // "cpu", "gpu:0", ...
  virtual const std::string& device() const = 0;
  // True when the back end's memory is host memory: callers may then pass
  // host pointers straight to the kernels instead of copying.
  virtual bool host_memory() const = 0;

  // Memory. Allocate fails with ResourceExhausted beyond the memory cap.
  // The copies move `bytes` between host memory and this back end's memory
  // (a GPU stages them through pinned host buffers). When CopyToDevice
  // returns, host_src may be reused and every later call sees the bytes;
  // when CopyToHost returns, the bytes are in host_dst.
  virtual StatusOr<std::unique_ptr<DeviceBuffer>> Allocate(size_t bytes) = 0;
  virtual void CopyToDevice(const void* host_src, void* device_dst, size_t bytes) = 0;
  virtual void CopyToHost(const void* device_src, void* host_dst, size_t bytes) = 0;

  // The kernels below return no Status, so that a step is a plain sequence
  // of calls. A back end whose call fails (a CUDA, cuBLAS or cuDNN error)
  // records the first failure, with file:line, and TakeError() returns and
  // clears it; callers check it once per step. Always OK on the CPU.
  virtual Status TakeError() = 0;

  // x is (B,IN), w is (IN,OUT), b is (OUT), y is (B,OUT): y = x*w + b.
  virtual void MatmulForward(const float* x, const float* w, const float* b, float* y,
                             int64_t batch, int64_t in, int64_t out) = 0;
  // dy is (B,OUT), w is (IN,OUT), dx is (B,IN): dx = dy*w^T.
  virtual void MatmulBackwardInput(const float* dy, const float* w, float* dx, int64_t batch,
                                   int64_t in, int64_t out) = 0;
  // x is (B,IN), dy is (B,OUT), dw is (IN,OUT): dw = x^T*dy.
  virtual void MatmulBackwardWeights(const float* x, const float* dy, float* dw, int64_t batch,
                                     int64_t in, int64_t out) = 0;
  // dy is (B,OUT), db is (OUT): db = column sums of dy.
  virtual void BiasBackward(const float* dy, float* db, int64_t batch, int64_t out) = 0;

  // x and y are (N): y = 1 / (1 + exp(-x)).
  virtual void SigmoidForward(const float* x, float* y, int64_t n) = 0;
  // y (the forward output), dy and dx are (N): dx = dy * y * (1 - y).
  virtual void SigmoidBackward(const float* y, const float* dy, float* dx, int64_t n) = 0;
  // x and y are (N): y = max(x, 0).
  virtual void ReluForward(const float* x, float* y, int64_t n) = 0;
  // x (the forward input), dy and dx are (N): dx = dy where x > 0, else 0.
  virtual void ReluBackward(const float* x, const float* dy, float* dx, int64_t n) = 0;

  // a, b and y are (N): y = a * b element-wise.
  virtual void Multiply(const float* a, const float* b, float* y, int64_t n) = 0;
  // x and y are (N): y = x.
  virtual void Copy(const float* x, float* y, int64_t n) = 0;
  // mask is (N): a dropout mask, the same on every back end for the same
  // arguments (kernels/dropout_hash.h): element i is 0 when the top 24 bits
  // of a hash of (seed, i), as u in [0, 1), fall below threshold / 2^24,
  // else `scale`.
  virtual void DropoutMask(uint64_t seed, uint32_t threshold, float scale, float* mask,
                           int64_t n) = 0;
  // a, b and y are (N): y = alpha * a + beta * b element-wise.
  virtual void ScaledSum(float alpha, const float* a, float beta, const float* b, float* y,
                         int64_t n) = 0;

  // x is (B,H,W,C), w is (R,S,C,K), b is (K), y is (B,P,Q,K):
  // y[n,p,q,k] = b[k] + sum over r,s,c of
  //   x[n, p*stride+r-padding, q*stride+s-padding, c] * w[r,s,c,k],
  // x being zero outside the image.
  virtual void Conv2DForward(const float* x, const float* w, const float* b, float* y,
                             const Conv2DShape& shape, int64_t batch) = 0;
  // dy is (B,P,Q,K), w is (R,S,C,K), dx is (B,H,W,C): the gradient of
  // Conv2DForward w.r.t. x. (Its bias gradient is BiasBackward(dy, db,
  // B*P*Q, K): NHWC makes dy a (B*P*Q, K) matrix.)
  virtual void Conv2DBackwardInput(const float* dy, const float* w, float* dx,
                                   const Conv2DShape& shape, int64_t batch) = 0;
  // x is (B,H,W,C), dy is (B,P,Q,K), dw is (R,S,C,K): the gradient of
  // Conv2DForward w.r.t. w.
  virtual void Conv2DBackwardWeights(const float* x, const float* dy, float* dw,
                                     const Conv2DShape& shape, int64_t batch) = 0;

  // x is (B,H,W,C); y and argmax are (B,H/2,W/2,C) (an odd last row or
  // column is dropped). y is the max of each 2x2 window, argmax the flat
  // index into x of that max (the first in row-major order on ties).
  // B*H*W*C must be below 2^31.
  virtual void MaxPool2x2Forward(const float* x, float* y, int32_t* argmax, int64_t batch,
                                 int64_t height, int64_t width, int64_t channels) = 0;
  // dy and argmax are (B,H/2,W/2,C), dx is (B,H,W,C): dx[argmax[i]] = dy[i],
  // zero elsewhere.
  virtual void MaxPool2x2Backward(const float* dy, const int32_t* argmax, float* dx, int64_t batch,
                                  int64_t height, int64_t width, int64_t channels) = 0;

  // Batch normalization, per column of the (ROWS,C) matrix x over its rows
  // (NHWC makes a convolution's output a (B*H*W, C) matrix); ROWS >= 1.
  // mean and variance are (C): each column's mean and biased variance
  // (divided by ROWS), the variance summed about the mean (not E[x^2] -
  // mean^2, which cancels when |mean| >> std).
  virtual void ColumnMoments(const float* x, float* mean, float* variance, int64_t rows,
                             int64_t channels) = 0;
  // x and y are (ROWS,C), the rest (C): y = x * scale + shift per column,
  // scale = gamma * inv_std and shift = beta - mean * scale, where inv_std =
  // 1 / sqrt(max(variance, 0) + epsilon) (a negative variance, as stale
  // moving averages can give, counts as 0).
  virtual void BatchNormForward(const float* x, const float* mean, const float* variance,
                                const float* gamma, const float* beta, double epsilon, float* y,
                                int64_t rows, int64_t channels) = 0;
  // The gradients of a BatchNormForward whose mean and variance were x's
  // ColumnMoments (training). With xhat = (x - mean) * inv_std: dbeta (C) =
  // column sums of dy, dgamma (C) = column sums of dy * xhat, and unless dx
  // is null, dx (ROWS,C) = gamma * inv_std / ROWS * (ROWS * dy - dbeta -
  // xhat * dgamma) (the mean and variance depend on every x of a column).
  virtual void BatchNormBackward(const float* x, const float* dy, const float* mean,
                                 const float* variance, const float* gamma, double epsilon,
                                 float* dgamma, float* dbeta, float* dx, int64_t rows,
                                 int64_t channels) = 0;

  // logits is (B,C), labels is (B) with values in [0,C), dlogits is (B,C).
  // Returns the mean over the batch of -log softmax(logits)[label]. Unless
  // dlogits is null, writes dlogits = (softmax(logits) - onehot(labels)) / B.
  virtual float SoftmaxCrossEntropy(const float* logits, const int32_t* labels, float* dlogits,
                                    int64_t batch, int64_t classes) = 0;
  // logits is (B,C), labels is (B): how many rows have their largest logit
  // (the first one on ties) at the label.
  virtual int64_t ArgmaxCorrect(const float* logits, const int32_t* labels, int64_t batch,
                                int64_t classes) = 0;
};

// Kernels for `device`: "cpu" (options.cpu_kernels; FailedPrecondition for
// kOnednn in a build without it), or "gpu:N" (FailedPrecondition while no
// GPU back end is available: not compiled in, or no such GPU). Anything else,
// or intra_op_threads below 1, is InvalidArgument.
StatusOr<std::unique_ptr<Kernels>> MakeKernels(const std::string& device,
                                               const KernelsOptions& options = {});

}  // namespace pst

#endif  // PST_KERNELS_KERNELS_H_

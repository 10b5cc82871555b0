// OnednnKernels: the "cpu" back end with its matrix products and 2-D
// convolutions on oneDNN; every other kernel (element-wise, max-pool, loss)
// and the memory are CpuKernels' (Eigen). CpuKernels is the reference it is
// tested against. oneDNN picks the instruction set at run time.
//
// Layouts are the interface's plain ones (row-major matrices, NHWC
// activations, HWIO filters), passed to oneDNN as they are, with one
// exception: a convolution lets oneDNN pick its filters' layout. Given HWIO
// filters oneDNN runs its GEMM-based kernel (im2col); its direct and brgemm
// kernels (AVX2, AVX-512) want blocked filters: on AVX-512, 1.9-2.9x faster
// for LeNet's forward and filter-gradient passes, 0.7-0.9x for the input
// gradient (which a first layer never runs; a per-pass choice by timing
// would win that back, about 2% of a cnn step). Since the filters change
// every step (pulled from the ps), each pass reorders them into a buffer of
// its own (and the filter gradient back to HWIO): R*S*C*K floats, small next
// to the convolution's B*P*Q*K*R*S*C multiply-adds. Activations are never
// copied.
//
// Per shape (matmul sizes, or Conv2DShape and batch) the primitives of the
// forward and both backward passes are made once and cached, with memory
// objects whose data pointers are set per call; one scratchpad, grown as
// needed, serves them all. A step of a batch size seen before allocates no
// buffers.
//
// Threads: each call runs on `threads` OpenMP threads, set in the calling
// thread before each call and before each primitive is created (OpenMP's
// thread count is per calling thread, and a primitive fixes its team size
// when created: one created under the default, a thread per core, kept a
// second OpenMP thread spinning beside every single-threaded worker).
//
// Thread safety: one thread at a time, as every Kernels.
#ifndef PST_KERNELS_ONEDNN_KERNELS_H_
#define PST_KERNELS_ONEDNN_KERNELS_H_

#include <array>
#include <cstdint>
#include <dnnl.hpp>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "kernels/cpu_kernels.h"

namespace pst {

class OnednnKernels : public CpuKernels {
 public:
  // threads >= 1.
  explicit OnednnKernels(int threads);

  void MatmulForward(const float* x, const float* w, const float* b, float* y, int64_t batch,
                     int64_t in, int64_t out) override;
  void MatmulBackwardInput(const float* dy, const float* w, float* dx, int64_t batch, int64_t in,
                           int64_t out) override;
  void MatmulBackwardWeights(const float* x, const float* dy, float* dw, int64_t batch, int64_t in,
                             int64_t out) override;

  // In onednn_conv_kernels.cc.
  void Conv2DForward(const float* x, const float* w, const float* b, float* y,
                     const Conv2DShape& shape, int64_t batch) override;
  void Conv2DBackwardInput(const float* dy, const float* w, float* dx, const Conv2DShape& shape,
                           int64_t batch) override;
  void Conv2DBackwardWeights(const float* x, const float* dy, float* dw, const Conv2DShape& shape,
                             int64_t batch) override;

 private:
  // One primitive and its arguments, each bound to a memory object whose
  // data pointer Run() sets.
  struct Call {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  // The three passes of one shape. For a convolution, each reorder between
  // the caller's HWIO filters and the blocked copy a pass is bound to (a
  // buffer of the plan's); none where the pass takes HWIO as it is.
  struct Plan {
    Call forward, backward_input, backward_weights;
    std::optional<Call> filters_to_forward, filters_to_backward_input,
        filter_gradient_from_backward;
  };
  using MatmulKey = std::array<int64_t, 3>;  // batch, in, out
  using ConvKey = std::array<int64_t, 9>;    // Conv2DShape's fields, batch

  // A Call of the primitive `pd` describes, with a memory object for each
  // of `args` (argument id, memory descriptor) and for its scratchpad.
  Call MakeCall(const dnnl::primitive_desc& pd,
                std::initializer_list<std::pair<int, dnnl::memory::desc>> args);
  // When `pass` wants its filters (argument `arg`) in `wanted` rather than
  // `hwio`: binds `pass` to a buffer of that layout and returns the reorder
  // between it and the caller's HWIO buffer, into the buffer when
  // `into_pass`, out of it otherwise.
  std::optional<Call> BindFilters(Call& pass, int arg, const dnnl::memory::desc& hwio,
                                  const dnnl::memory::desc& wanted, bool into_pass);
  // The filters `w` as `to_pass` leaves them for its pass: w itself when
  // there is no reorder, else the pass's own copy, reordered now.
  const void* FiltersFor(std::optional<Call>& to_pass, const float* w);
  // Runs `call` on the given (argument id, data pointer) pairs, one for each
  // argument but the scratchpad.
  void Run(Call& call, std::initializer_list<std::pair<int, const void*>> data);

  // A batch of no examples: oneDNN cannot make primitives for it (its
  // work split divides by the batch size, SIGFPE), so the passes skip
  // oneDNN: the forward and input-gradient passes have nothing to write,
  // the weight gradient of no examples is zero.
  static void EmptyBatch(float* gradient, int64_t size);
  // omp_set_num_threads(threads_) in the calling thread.
  void UseThreads() const;
  Plan& MatmulPlan(int64_t batch, int64_t in, int64_t out);
  Plan& ConvPlan(const Conv2DShape& shape, int64_t batch);

  const int threads_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::map<MatmulKey, std::unique_ptr<Plan>> matmul_plans_;
  std::map<ConvKey, std::unique_ptr<Plan>> conv_plans_;
  std::unique_ptr<DeviceBuffer> scratchpad_;  // null until a call needs one
};

}  // namespace pst

#endif  // PST_KERNELS_ONEDNN_KERNELS_H_

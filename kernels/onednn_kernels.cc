// OnednnKernels' set-up, calls and matrix products.
//
// The three products are oneDNN matmuls on the caller's row-major buffers;
// a transposed operand is the same buffer described with swapped strides
// (format tag ba), so nothing is copied:
//   forward           y  = x * w + b     x (B,IN) ab, w (IN,OUT) ab
//   input gradient    dx = dy * w^T      w^T (OUT,IN) ba
//   weight gradient   dw = x^T * dy      x^T (IN,B) ba
#include "kernels/onednn_kernels.h"

#include <glog/logging.h>
#include <omp.h>

#include <algorithm>

namespace pst {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

memory::desc Matrix(int64_t rows, int64_t cols, Tag tag = Tag::ab) {
  return memory::desc({rows, cols}, memory::data_type::f32, tag);
}

}  // namespace

OnednnKernels::OnednnKernels(int threads)
    : threads_(threads), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  CHECK_GE(threads, 1);
}

OnednnKernels::Call OnednnKernels::MakeCall(
    const dnnl::primitive_desc& pd, std::initializer_list<std::pair<int, memory::desc>> args) {
  Call call;
  call.primitive = dnnl::primitive(pd);
  // No buffer yet: Run() points each memory object at the call's data.
  for (const auto& [arg, desc] : args) {
    call.args.emplace(arg, memory(desc, engine_, DNNL_MEMORY_NONE));
  }
  const memory::desc scratchpad = pd.scratchpad_desc();
  if (scratchpad.get_size() > 0) {
    call.args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad, engine_, DNNL_MEMORY_NONE));
  }
  return call;
}

void OnednnKernels::Run(Call& call, std::initializer_list<std::pair<int, const void*>> data) {
  for (const auto& [arg, pointer] : data) {
    // oneDNN takes non-const handles; it only reads its inputs.
    call.args.at(arg).set_data_handle(const_cast<void*>(pointer));
  }
  const auto scratchpad = call.args.find(DNNL_ARG_SCRATCHPAD);
  if (scratchpad != call.args.end()) {
    const size_t bytes = scratchpad->second.get_desc().get_size();
    if (scratchpad_ == nullptr || scratchpad_->bytes() < bytes) {
      scratchpad_ = std::move(Allocate(bytes)).value();  // host memory: never fails
    }
    scratchpad->second.set_data_handle(scratchpad_->data());
  }
  UseThreads();
  call.primitive.execute(stream_, call.args);
  stream_.wait();
}

void OnednnKernels::EmptyBatch(float* gradient, int64_t size) {
  std::fill(gradient, gradient + size, 0.0f);
}

void OnednnKernels::UseThreads() const {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
  omp_set_num_threads(threads_);
#endif
}

OnednnKernels::Plan& OnednnKernels::MatmulPlan(int64_t batch, int64_t in, int64_t out) {
  std::unique_ptr<Plan>& plan = matmul_plans_[{batch, in, out}];
  if (plan != nullptr) return *plan;
  UseThreads();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto matmul = [&](const memory::desc& a, const memory::desc& b, const memory::desc& bias,
                          const memory::desc& c) {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, bias, c), attr, engine_);
  };
  try {
    plan = std::make_unique<Plan>();
    const memory::desc x = Matrix(batch, in), w = Matrix(in, out), b = Matrix(1, out),
                       y = Matrix(batch, out);
    plan->forward =
        MakeCall(matmul(x, w, b, y),
                 {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}});
    const memory::desc wt = Matrix(out, in, Tag::ba);
    plan->backward_input = MakeCall(matmul(y, wt, memory::desc(), x),
                                    {{DNNL_ARG_SRC, y}, {DNNL_ARG_WEIGHTS, wt}, {DNNL_ARG_DST, x}});
    const memory::desc xt = Matrix(in, batch, Tag::ba);
    plan->backward_weights =
        MakeCall(matmul(xt, y, memory::desc(), w),
                 {{DNNL_ARG_SRC, xt}, {DNNL_ARG_WEIGHTS, y}, {DNNL_ARG_DST, w}});
  } catch (const dnnl::error& e) {
    LOG(FATAL) << "oneDNN cannot make the matmuls of (B,IN,OUT) = (" << batch << "," << in << ","
               << out << "): " << e.what();
  }
  return *plan;
}

void OnednnKernels::MatmulForward(const float* x, const float* w, const float* b, float* y,
                                  int64_t batch, int64_t in, int64_t out) {
  if (batch == 0) return;  // see EmptyBatch
  Run(MatmulPlan(batch, in, out).forward,
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}});
}

void OnednnKernels::MatmulBackwardInput(const float* dy, const float* w, float* dx, int64_t batch,
                                        int64_t in, int64_t out) {
  if (batch == 0) return;
  Run(MatmulPlan(batch, in, out).backward_input,
      {{DNNL_ARG_SRC, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dx}});
}

void OnednnKernels::MatmulBackwardWeights(const float* x, const float* dy, float* dw, int64_t batch,
                                          int64_t in, int64_t out) {
  if (batch == 0) return EmptyBatch(dw, in * out);
  Run(MatmulPlan(batch, in, out).backward_weights,
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, dy}, {DNNL_ARG_DST, dw}});
}

}  // namespace pst

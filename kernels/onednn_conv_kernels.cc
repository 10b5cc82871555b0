// OnednnKernels' 2-D convolutions: oneDNN's direct convolution on the
// interface's layouts. oneDNN names dimensions logically (N,C,H,W for
// activations, O,I,H,W for filters) and takes the memory order from a format
// tag: nhwc for x and y, hwio for w, which are exactly NHWC and HWIO.
#include <glog/logging.h>

#include "kernels/onednn_kernels.h"

namespace pst {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct ConvDescs {
  memory::desc x, w, b, y;
  memory::dims strides, padding;
};

ConvDescs Describe(const Conv2DShape& s, int64_t batch) {
  const auto f32 = memory::data_type::f32;
  return {memory::desc({batch, s.in_channels, s.height, s.width}, f32, Tag::nhwc),
          memory::desc({s.out_channels, s.in_channels, s.filter_height, s.filter_width}, f32,
                       Tag::hwio),
          memory::desc({s.out_channels}, f32, Tag::a),
          memory::desc({batch, s.out_channels, s.out_height(), s.out_width()}, f32, Tag::nhwc),
          {s.stride, s.stride},
          {s.padding, s.padding}};
}

}  // namespace

OnednnKernels::Plan& OnednnKernels::ConvPlan(const Conv2DShape& s, int64_t batch) {
  std::unique_ptr<Plan>& plan =
      conv_plans_[{s.height, s.width, s.in_channels, s.filter_height, s.filter_width,
                   s.out_channels, s.stride, s.padding, batch}];
  if (plan != nullptr) return *plan;
  UseThreads();
  const ConvDescs d = Describe(s, batch);
  const auto direct = dnnl::algorithm::convolution_direct;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    plan = std::make_unique<Plan>();
    // The padding is the same on both sides: the output size rounds down
    // (Conv2DShape::out_height), so rows past the last window are unread.
    const dnnl::convolution_forward::primitive_desc forward(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, direct, d.x, d.w, d.b,
                                        d.y, d.strides, d.padding, d.padding),
        attr, engine_);
    plan->forward = MakeCall(
        forward,
        {{DNNL_ARG_SRC, d.x}, {DNNL_ARG_WEIGHTS, d.w}, {DNNL_ARG_BIAS, d.b}, {DNNL_ARG_DST, d.y}});
    plan->backward_input =
        MakeCall(dnnl::convolution_backward_data::primitive_desc(
                     dnnl::convolution_backward_data::desc(direct, d.x, d.w, d.y, d.strides,
                                                           d.padding, d.padding),
                     attr, engine_, forward),
                 {{DNNL_ARG_DIFF_DST, d.y}, {DNNL_ARG_WEIGHTS, d.w}, {DNNL_ARG_DIFF_SRC, d.x}});
    plan->backward_weights =
        MakeCall(dnnl::convolution_backward_weights::primitive_desc(
                     dnnl::convolution_backward_weights::desc(direct, d.x, d.w, d.y, d.strides,
                                                              d.padding, d.padding),
                     attr, engine_, forward),
                 {{DNNL_ARG_SRC, d.x}, {DNNL_ARG_DIFF_DST, d.y}, {DNNL_ARG_DIFF_WEIGHTS, d.w}});
  } catch (const dnnl::error& e) {
    LOG(FATAL) << "oneDNN cannot make the convolutions of " << s.height << "x" << s.width << "x"
               << s.in_channels << " * " << s.filter_height << "x" << s.filter_width << "x"
               << s.out_channels << ", stride " << s.stride << ", padding " << s.padding
               << ", batch " << batch << ": " << e.what();
  }
  return *plan;
}

void OnednnKernels::Conv2DForward(const float* x, const float* w, const float* b, float* y,
                                  const Conv2DShape& shape, int64_t batch) {
  Run(ConvPlan(shape, batch).forward,
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}});
}

void OnednnKernels::Conv2DBackwardInput(const float* dy, const float* w, float* dx,
                                        const Conv2DShape& shape, int64_t batch) {
  Run(ConvPlan(shape, batch).backward_input,
      {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, dx}});
}

void OnednnKernels::Conv2DBackwardWeights(const float* x, const float* dy, float* dw,
                                          const Conv2DShape& shape, int64_t batch) {
  Run(ConvPlan(shape, batch).backward_weights,
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, dw}});
}

}  // namespace pst

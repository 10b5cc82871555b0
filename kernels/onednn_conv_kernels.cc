// OnednnKernels' 2-D convolutions: oneDNN's direct convolution. oneDNN
// names dimensions logically (N,C,H,W for activations, O,I,H,W for filters)
// and takes the memory order from a format tag: nhwc for x and y, exactly
// the interface's NHWC; the filters' tag is `any`, so that each pass picks
// the blocked layout its fastest kernel wants, and the caller's HWIO filters
// (tag hwio) are reordered to and from it (see onednn_kernels.h).
#include <glog/logging.h>

#include "kernels/onednn_kernels.h"

namespace pst {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct ConvDescs {
  memory::desc x, w, b, y;
  memory::desc hwio;  // the caller's filters
  memory::dims strides, padding;
};

ConvDescs Describe(const Conv2DShape& s, int64_t batch) {
  const auto f32 = memory::data_type::f32;
  const memory::dims filters = {s.out_channels, s.in_channels, s.filter_height, s.filter_width};
  return {memory::desc({batch, s.in_channels, s.height, s.width}, f32, Tag::nhwc),
          memory::desc(filters, f32, Tag::any),
          memory::desc({s.out_channels}, f32, Tag::a),
          memory::desc({batch, s.out_channels, s.out_height(), s.out_width()}, f32, Tag::nhwc),
          memory::desc(filters, f32, Tag::hwio),
          {s.stride, s.stride},
          {s.padding, s.padding}};
}

}  // namespace

std::optional<OnednnKernels::Call> OnednnKernels::BindFilters(Call& pass, int arg,
                                                              const memory::desc& hwio,
                                                              const memory::desc& wanted,
                                                              bool into_pass) {
  if (wanted == hwio) return std::nullopt;
  const memory blocked(wanted, engine_);  // allocated here, once per plan
  pass.args.at(arg) = blocked;
  const memory caller(hwio, engine_, DNNL_MEMORY_NONE);
  const memory& from = into_pass ? caller : blocked;
  const memory& to = into_pass ? blocked : caller;
  return Call{dnnl::reorder(from, to), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
}

const void* OnednnKernels::FiltersFor(std::optional<Call>& to_pass, const float* w) {
  if (!to_pass) return w;
  Run(*to_pass, {{DNNL_ARG_FROM, w}});
  return to_pass->args.at(DNNL_ARG_TO).get_data_handle();
}

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
    plan->forward = MakeCall(forward, {{DNNL_ARG_SRC, d.x},
                                       {DNNL_ARG_WEIGHTS, forward.weights_desc()},
                                       {DNNL_ARG_BIAS, d.b},
                                       {DNNL_ARG_DST, d.y}});
    plan->filters_to_forward = BindFilters(plan->forward, DNNL_ARG_WEIGHTS, d.hwio,
                                           forward.weights_desc(), /*into_pass=*/true);
    const dnnl::convolution_backward_data::primitive_desc backward_input(
        dnnl::convolution_backward_data::desc(direct, d.x, d.w, d.y, d.strides, d.padding,
                                              d.padding),
        attr, engine_, forward);
    plan->backward_input =
        MakeCall(backward_input, {{DNNL_ARG_DIFF_DST, d.y},
                                  {DNNL_ARG_WEIGHTS, backward_input.weights_desc()},
                                  {DNNL_ARG_DIFF_SRC, d.x}});
    plan->filters_to_backward_input =
        BindFilters(plan->backward_input, DNNL_ARG_WEIGHTS, d.hwio, backward_input.weights_desc(),
                    /*into_pass=*/true);
    const dnnl::convolution_backward_weights::primitive_desc backward_weights(
        dnnl::convolution_backward_weights::desc(direct, d.x, d.w, d.y, d.strides, d.padding,
                                                 d.padding),
        attr, engine_, forward);
    plan->backward_weights =
        MakeCall(backward_weights, {{DNNL_ARG_SRC, d.x},
                                    {DNNL_ARG_DIFF_DST, d.y},
                                    {DNNL_ARG_DIFF_WEIGHTS, backward_weights.diff_weights_desc()}});
    plan->filter_gradient_from_backward =
        BindFilters(plan->backward_weights, DNNL_ARG_DIFF_WEIGHTS, d.hwio,
                    backward_weights.diff_weights_desc(), /*into_pass=*/false);
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
  if (batch == 0) return;  // see EmptyBatch
  Plan& plan = ConvPlan(shape, batch);
  Run(plan.forward, {{DNNL_ARG_SRC, x},
                     {DNNL_ARG_WEIGHTS, FiltersFor(plan.filters_to_forward, w)},
                     {DNNL_ARG_BIAS, b},
                     {DNNL_ARG_DST, y}});
}

void OnednnKernels::Conv2DBackwardInput(const float* dy, const float* w, float* dx,
                                        const Conv2DShape& shape, int64_t batch) {
  if (batch == 0) return;
  Plan& plan = ConvPlan(shape, batch);
  Run(plan.backward_input, {{DNNL_ARG_DIFF_DST, dy},
                            {DNNL_ARG_WEIGHTS, FiltersFor(plan.filters_to_backward_input, w)},
                            {DNNL_ARG_DIFF_SRC, dx}});
}

void OnednnKernels::Conv2DBackwardWeights(const float* x, const float* dy, float* dw,
                                          const Conv2DShape& shape, int64_t batch) {
  if (batch == 0) {
    return EmptyBatch(
        dw, shape.filter_height * shape.filter_width * shape.in_channels * shape.out_channels);
  }
  Plan& plan = ConvPlan(shape, batch);
  std::optional<Call>& from_pass = plan.filter_gradient_from_backward;
  // Into the pass's own buffer when it has one, then reordered into dw.
  const void* gradient = from_pass ? from_pass->args.at(DNNL_ARG_FROM).get_data_handle() : dw;
  Run(plan.backward_weights,
      {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, gradient}});
  if (from_pass) Run(*from_pass, {{DNNL_ARG_TO, dw}});
}

}  // namespace pst

#include "model/parallel/pipeline_stage.h"

#include <glog/logging.h>

#include <Eigen/Core>
#include <utility>

#include "model/ensure_buffer.h"

namespace pst {
namespace {

std::vector<VariableSpec> SliceVariables(const PipelineStage::Layers& layers) {
  std::vector<VariableSpec> variables;
  for (const std::unique_ptr<Layer>& layer : layers) {
    for (VariableSpec& spec : layer->Variables()) variables.push_back(std::move(spec));
  }
  return variables;
}

const PipelineStage::Layers& FirstSlot(const std::vector<PipelineStage::Layers>& slots) {
  CHECK(!slots.empty() && !slots.front().empty()) << "a pipeline stage needs a layer";
  return slots.front();
}

}  // namespace

PipelineStage::PipelineStage(std::unique_ptr<Kernels> kernels, std::vector<Layers> slots,
                             bool first, bool last)
    : kernels_(std::move(kernels)),
      slots_(std::move(slots)),
      first_(first),
      last_(last),
      variables_(SliceVariables(FirstSlot(slots_))),
      io_(*kernels_, variables_, FirstSlot(slots_).front()->in_dim()),
      activations_(layers().size()),
      activation_grads_(layers().size()) {
  size_t next = 0;
  for (size_t i = 0; i < layers().size(); ++i) {
    if (i > 0) CHECK_EQ(layers()[i - 1]->out_dim(), layers()[i]->in_dim());
    first_variable_.push_back(next);
    next += layers()[i]->Variables().size();
  }
  for (const Layers& slot : slots_) CHECK_EQ(slot.size(), layers().size());
  if (last_) loss_ = std::make_unique<SoftmaxCrossEntropy>(out_dim(), *kernels_);
  for (const VariableSpec& spec : variables_) scratch_grads_.emplace_back(spec.dtype, spec.shape);
}

std::vector<std::string> PipelineStage::Placement() const {
  const std::string on = " on " + device();
  std::vector<std::string> lines;
  for (const std::unique_ptr<Layer>& layer : layers()) lines.push_back(layer->Describe() + on);
  if (last_) {
    lines.push_back("softmax_cross_entropy (" + std::to_string(out_dim()) + " classes)" + on);
  }
  return lines;
}

Status PipelineStage::Reserve(int64_t batch, const std::vector<int64_t>& slot_sizes,
                              bool backward) {
  CHECK_LE(slot_sizes.size(), slots_.size());
  // io_ moves only the parameters and gradients (its batch buffers, sized
  // for one example, go unused): the stage moves its own rows below.
  PST_RETURN_IF_ERROR(io_.Reserve(1, backward));
  const bool host = kernels_->host_memory();
  const size_t input_bytes = batch * in_dim() * sizeof(float);
  if (!host) PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, input_bytes, &input_));
  if (backward && !first_) {
    PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, input_bytes, &input_grad_));
  }
  if (last_ && !host) {
    PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, batch * sizeof(int32_t), &labels_buffer_));
  }
  for (size_t i = 0; i < layers().size(); ++i) {
    const size_t bytes = batch * layers()[i]->out_dim() * sizeof(float);
    PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, bytes, &activations_[i]));
    if (backward) PST_RETURN_IF_ERROR(EnsureBuffer(*kernels_, bytes, &activation_grads_[i]));
  }
  for (size_t s = 0; s < slot_sizes.size(); ++s) {
    for (const std::unique_ptr<Layer>& layer : slots_[s]) {
      PST_RETURN_IF_ERROR(layer->Reserve(slot_sizes[s]));
    }
  }
  if (!host) {
    output_copy_.resize(batch * out_dim());
    if (backward && !first_) input_grad_copy_.resize(batch * in_dim());
  }
  output_host_ = host ? activations_.back()->f32() : output_copy_.data();
  input_grad_host_ = (!backward || first_) ? nullptr
                     : host                ? input_grad_->f32()
                                           : input_grad_copy_.data();
  return Status::OK();
}

void PipelineStage::SetParams(const std::vector<Tensor>& params) { io_.SetParams(params); }

void PipelineStage::SetLabels(const int32_t* labels, int64_t batch) {
  CHECK(last_);
  if (kernels_->host_memory()) {
    labels_ = labels;
    return;
  }
  kernels_->CopyToDevice(labels, labels_buffer_->data(), batch * sizeof(int32_t));
  labels_ = static_cast<const int32_t*>(labels_buffer_->data());
}

const float* PipelineStage::ToDevice(const float* host, DeviceBuffer* buffer, int64_t row,
                                     int64_t size, int64_t dim) {
  if (kernels_->host_memory()) return host + row * dim;
  float* dst = buffer->f32() + row * dim;
  kernels_->CopyToDevice(host + row * dim, dst, size * dim * sizeof(float));
  return dst;
}

void PipelineStage::ToHost(const float* device, std::vector<float>* host, int64_t row, int64_t size,
                           int64_t dim) {
  if (kernels_->host_memory()) return;
  kernels_->CopyToHost(device + row * dim, host->data() + row * dim, size * dim * sizeof(float));
}

void PipelineStage::Forward(int slot, int64_t row, int64_t size, const float* input,
                            bool training) {
  input_host_ = input;
  const float* x = ToDevice(input, input_.get(), row, size, in_dim());
  const Layers& layers = slots_[slot];
  for (size_t i = 0; i < layers.size(); ++i) {
    float* y = activations_[i]->f32() + row * layers[i]->out_dim();
    layers[i]->Forward(io_.params() + first_variable_[i], x, y, size, training);
    x = y;
  }
  ToHost(activations_.back()->f32(), &output_copy_, row, size, out_dim());
}

float PipelineStage::Loss(int64_t row, int64_t size) {
  CHECK(last_);
  const int64_t classes = out_dim();
  return loss_->Loss(activations_.back()->f32() + row * classes, labels_ + row,
                     activation_grads_.back()->f32() + row * classes, size);
}

void PipelineStage::Backward(int slot, int64_t row, int64_t size, const float* dy, float weight,
                             bool first) {
  CHECK(grads_ != nullptr);
  // The gradient of the stage's output: the loss's, or the next stage's
  // input gradient.
  const float* output_grad =
      last_ ? activation_grads_.back()->f32() + row * out_dim()
            : ToDevice(dy, activation_grads_.back().get(), row, size, out_dim());
  io_.SetGrads(&scratch_grads_);
  const Layers& layers = slots_[slot];
  for (size_t i = layers.size(); i-- > 0;) {
    const int64_t in = layers[i]->in_dim();
    const int64_t out = layers[i]->out_dim();
    const float* x = i == 0 ? (kernels_->host_memory() ? input_host_ : input_->f32()) + row * in
                            : activations_[i - 1]->f32() + row * in;
    float* dx = i > 0    ? activation_grads_[i - 1]->f32() + row * in
                : first_ ? nullptr
                         : input_grad_->f32() + row * in;
    const float* y_grad =
        i + 1 == layers.size() ? output_grad : activation_grads_[i]->f32() + row * out;
    layers[i]->Backward(io_.params() + first_variable_[i], x, activations_[i]->f32() + row * out,
                        y_grad, io_.grads() + first_variable_[i], dx, size);
  }
  io_.FetchGrads(&scratch_grads_, 0, scratch_grads_.size());
  if (!first_) ToHost(input_grad_->f32(), &input_grad_copy_, row, size, in_dim());
  for (size_t v = 0; v < scratch_grads_.size(); ++v) {
    const int64_t n = scratch_grads_[v].num_elements();
    Eigen::Map<Eigen::ArrayXf> out((*grads_)[v].f32(), n);
    const Eigen::Map<const Eigen::ArrayXf> g(scratch_grads_[v].f32(), n);
    if (first) {
      out = weight * g;
    } else {
      out += weight * g;
    }
  }
}

double PipelineStage::LossSum(int64_t batch) {
  CHECK(last_);
  return static_cast<double>(
             loss_->Loss(activations_.back()->f32(), labels_, /*dlogits=*/nullptr, batch)) *
         static_cast<double>(batch);
}

int64_t PipelineStage::CountCorrect(int64_t batch) {
  CHECK(last_);
  return loss_->CountCorrect(activations_.back()->f32(), labels_, batch);
}

void PipelineStage::CopyLogits(int64_t batch, float* host) {
  CHECK(last_);
  kernels_->CopyToHost(activations_.back()->f32(), host, batch * out_dim() * sizeof(float));
}

}  // namespace pst

#include "model/device_io.h"

#include <glog/logging.h>

#include "model/ensure_buffer.h"

namespace pst {
namespace {

// Each variable starts on a 256-byte boundary of the shared buffer, as if
// it had a cudaMalloc buffer of its own: cuBLAS and cuDNN pick their
// fastest kernels only for aligned operands.
constexpr size_t kAlignFloats = 256 / sizeof(float);

size_t RoundUp(size_t n) { return (n + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

}  // namespace

DeviceIo::DeviceIo(Kernels& kernels, const std::vector<VariableSpec>& variables, int64_t input_dim)
    : kernels_(kernels),
      input_dim_(input_dim),
      param_ptrs_(variables.size()),
      grad_ptrs_(variables.size()) {
  for (const VariableSpec& spec : variables) {
    CHECK(spec.dtype == DType::kFloat32) << spec.name;
    sizes_.push_back(NumElements(spec.shape));
    offsets_.push_back(total_floats_);
    total_floats_ += RoundUp(sizes_.back());
  }
}

Status DeviceIo::Reserve(int64_t batch, bool gradients) {
  if (kernels_.host_memory()) return Status::OK();
  const size_t variable_bytes = total_floats_ * sizeof(float);
  PST_RETURN_IF_ERROR(EnsureBuffer(kernels_, variable_bytes, &params_));
  if (gradients) {
    PST_RETURN_IF_ERROR(EnsureBuffer(kernels_, variable_bytes, &grads_));
  }
  PST_RETURN_IF_ERROR(EnsureBuffer(kernels_, batch * input_dim_ * sizeof(float), &features_));
  return EnsureBuffer(kernels_, batch * sizeof(int32_t), &labels_);
}

void DeviceIo::SetParams(const std::vector<Tensor>& params) {
  CHECK_EQ(params.size(), sizes_.size());
  for (size_t v = 0; v < params.size(); ++v) {
    if (kernels_.host_memory()) {
      param_ptrs_[v] = params[v].f32();
      continue;
    }
    float* dst = params_->f32() + offsets_[v];
    kernels_.CopyToDevice(params[v].data(), dst, sizes_[v] * sizeof(float));
    param_ptrs_[v] = dst;
  }
}

void DeviceIo::SetBatch(const Batch& batch) {
  if (kernels_.host_memory()) {
    features_ptr_ = batch.features.data();
    labels_ptr_ = batch.labels.data();
    return;
  }
  const size_t feature_bytes = batch.features.size() * sizeof(float);
  const size_t label_bytes = batch.labels.size() * sizeof(int32_t);
  CHECK(features_ != nullptr && features_->bytes() >= feature_bytes);
  CHECK(labels_ != nullptr && labels_->bytes() >= label_bytes);
  kernels_.CopyToDevice(batch.features.data(), features_->data(), feature_bytes);
  kernels_.CopyToDevice(batch.labels.data(), labels_->data(), label_bytes);
  features_ptr_ = features_->f32();
  labels_ptr_ = labels_->i32();
}

void DeviceIo::SetGrads(std::vector<Tensor>* host_grads) {
  CHECK_EQ(host_grads->size(), sizes_.size());
  for (size_t v = 0; v < host_grads->size(); ++v) {
    grad_ptrs_[v] = kernels_.host_memory() ? (*host_grads)[v].f32() : grads_->f32() + offsets_[v];
  }
}

void DeviceIo::FetchGrads(std::vector<Tensor>* host_grads, size_t first, size_t end) {
  CHECK_LE(end, host_grads->size());
  if (kernels_.host_memory()) return;
  for (size_t v = first; v < end; ++v) {
    kernels_.CopyToHost(grad_ptrs_[v], (*host_grads)[v].data(), sizes_[v] * sizeof(float));
  }
}

}  // namespace pst

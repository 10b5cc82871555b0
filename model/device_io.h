// DeviceIo: a model's traffic between host tensors and its Kernels' memory.
// A step's inputs (parameter values, a batch's features and int32 labels)
// arrive in host memory and its gradients must leave in host tensors, while
// the kernels read and write the back end's memory. On a host-memory back
// end (CPU) DeviceIo copies nothing: the pointers it hands out are the host
// tensors' own. On any other it copies through device buffers that
// Reserve() allocates and later steps reuse.
//
// Borrows the Kernels, which must outlive it. Not thread-safe.
#ifndef PST_MODEL_DEVICE_IO_H_
#define PST_MODEL_DEVICE_IO_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/batch.h"
#include "common/status.h"
#include "common/tensor.h"
#include "common/variable_spec.h"
#include "kernels/kernels.h"

namespace pst {

class DeviceIo {
 public:
  // `variables` (float32) and `input_dim` are the model's.
  DeviceIo(Kernels& kernels, const std::vector<VariableSpec>& variables, int64_t input_dim);

  // Allocates what a step on up to `batch` examples needs, with the
  // gradient buffers when `gradients`; allocates only what grows. Call it
  // before the Set* calls of each step. Errors: Allocate's.
  Status Reserve(int64_t batch, bool gradients);

  // The Set* calls take tensors and batches that match the variables and
  // the reserved size (the caller validated them); they copy host to device.
  // params() then points at `params`' values.
  void SetParams(const std::vector<Tensor>& params);
  // features() and labels() then point at `batch`'s.
  void SetBatch(const Batch& batch);
  // grads() then points at where a backward pass is to write the gradients
  // for *host_grads: their own bytes on host memory, else device buffers
  // that FetchGrads() copies into *host_grads.
  void SetGrads(std::vector<Tensor>* host_grads);
  // Copies the gradients of variables [first, end) into *host_grads.
  void FetchGrads(std::vector<Tensor>* host_grads, size_t first, size_t end);

  // In the back end's memory, valid until the next Set* or Reserve call.
  const float* const* params() const { return param_ptrs_.data(); }
  float* const* grads() const { return grad_ptrs_.data(); }
  const float* features() const { return features_ptr_; }
  const int32_t* labels() const { return labels_ptr_; }

 private:
  Kernels& kernels_;
  const int64_t input_dim_;
  // Variable v is sizes_[v] floats at offsets_[v] of params_ and grads_.
  std::vector<size_t> sizes_, offsets_;
  size_t total_floats_ = 0;
  // Device buffers; null on a host-memory back end.
  std::unique_ptr<DeviceBuffer> params_, grads_, features_, labels_;

  std::vector<const float*> param_ptrs_;
  std::vector<float*> grad_ptrs_;
  const float* features_ptr_ = nullptr;
  const int32_t* labels_ptr_ = nullptr;
};

}  // namespace pst

#endif  // PST_MODEL_DEVICE_IO_H_

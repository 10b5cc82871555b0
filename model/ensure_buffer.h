// EnsureBuffer: the grow-only buffers that the model and its layers keep in
// a back end's memory, sized for the largest batch seen so far, so that a
// steady batch size (or a smaller last batch) allocates nothing per step.
#ifndef PST_MODEL_ENSURE_BUFFER_H_
#define PST_MODEL_ENSURE_BUFFER_H_

#include <cstddef>
#include <memory>

#include "common/status.h"
#include "kernels/kernels.h"

namespace pst {

// Makes *buffer hold at least `bytes` of `kernels`' memory: keeps it when it
// already does, otherwise frees it and allocates a new one (contents are not
// kept). On error *buffer is null. Errors: Allocate's (ResourceExhausted).
Status EnsureBuffer(Kernels& kernels, size_t bytes, std::unique_ptr<DeviceBuffer>* buffer);

}  // namespace pst

#endif  // PST_MODEL_ENSURE_BUFFER_H_

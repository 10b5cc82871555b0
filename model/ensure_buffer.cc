#include "model/ensure_buffer.h"

#include <utility>

namespace pst {

Status EnsureBuffer(Kernels& kernels, size_t bytes, std::unique_ptr<DeviceBuffer>* buffer) {
  if (*buffer != nullptr && (*buffer)->bytes() >= bytes) return Status::OK();
  // Freed first: on a GPU the old and the new buffer may not both fit.
  buffer->reset();
  PST_ASSIGN_OR_RETURN(*buffer, kernels.Allocate(bytes));
  return Status::OK();
}

}  // namespace pst

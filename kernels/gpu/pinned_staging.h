// PinnedStaging: copies between pageable host memory and a GPU through two
// pinned host buffers ("halves") of kChunkBytes each, so that the host's
// memcpy of one chunk overlaps the DMA of the other (a copy straight from
// pageable memory would be staged by the driver one block at a time).
//
// ToDevice returns once the source has been read: the DMA of its last chunk
// may still run, ordered on the stream before any later work, so kernels
// queued after it see the bytes. ToHost returns when the bytes are in
// host_dst. Thread safety: one thread at a time, like the stream it uses.
#ifndef PST_KERNELS_GPU_PINNED_STAGING_H_
#define PST_KERNELS_GPU_PINNED_STAGING_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/status.h"

namespace pst {

class PinnedStaging {
 public:
  // 4 MiB: large enough for the DMA to run at full speed, small enough that
  // the first chunk's memcpy, which nothing overlaps, stays short.
  static constexpr size_t kChunkBytes = size_t{4} << 20;

  // Copies on `stream`, which must outlive this object.
  explicit PinnedStaging(cudaStream_t stream) : stream_(stream) {}
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging();

  Status ToDevice(const void* host_src, void* device_dst, size_t bytes);
  Status ToHost(const void* device_src, void* host_dst, size_t bytes);

 private:
  struct Half {
    void* host = nullptr;        // kChunkBytes of pinned memory
    cudaEvent_t free = nullptr;  // recorded after the last DMA that used it
  };
  // Allocates the halves on first use.
  Status Reserve();

  const cudaStream_t stream_;
  Half halves_[2];
};

}  // namespace pst

#endif  // PST_KERNELS_GPU_PINNED_STAGING_H_

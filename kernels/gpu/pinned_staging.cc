#include "kernels/gpu/pinned_staging.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/gpu/cuda_check.h"

namespace pst {

PinnedStaging::~PinnedStaging() {
  // Nobody is left to report a failure to: wait for the DMAs that read the
  // halves, then free them.
  for (Half& half : halves_) {
    if (half.free != nullptr) {
      cudaEventSynchronize(half.free);
      cudaEventDestroy(half.free);
    }
    if (half.host != nullptr) cudaFreeHost(half.host);
  }
  cudaGetLastError();
}

Status PinnedStaging::Reserve() {
  for (Half& half : halves_) {
    if (half.host == nullptr) PST_CUDA_RETURN_IF_ERROR(cudaMallocHost(&half.host, kChunkBytes));
    if (half.free == nullptr) {
      PST_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&half.free, cudaEventDisableTiming));
    }
  }
  return Status::OK();
}

Status PinnedStaging::ToDevice(const void* host_src, void* device_dst, size_t bytes) {
  if (bytes == 0) return Status::OK();
  PST_RETURN_IF_ERROR(Reserve());
  const auto* src = static_cast<const uint8_t*>(host_src);
  auto* dst = static_cast<uint8_t*>(device_dst);
  for (size_t offset = 0, chunk = 0; offset < bytes; offset += kChunkBytes, ++chunk) {
    const size_t n = std::min(kChunkBytes, bytes - offset);
    Half& half = halves_[chunk % 2];
    // The half's previous DMA (of this copy or an earlier one) has read it.
    PST_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(half.free));
    std::memcpy(half.host, src + offset, n);
    PST_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(dst + offset, half.host, n, cudaMemcpyHostToDevice, stream_));
    PST_CUDA_RETURN_IF_ERROR(cudaEventRecord(half.free, stream_));
  }
  return Status::OK();
}

Status PinnedStaging::ToHost(const void* device_src, void* host_dst, size_t bytes) {
  if (bytes == 0) return Status::OK();
  PST_RETURN_IF_ERROR(Reserve());
  const auto* src = static_cast<const uint8_t*>(device_src);
  auto* dst = static_cast<uint8_t*>(host_dst);
  const size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  const auto chunk_bytes = [&](size_t c) { return std::min(kChunkBytes, bytes - c * kChunkBytes); };
  const auto start_dma = [&](size_t c) -> Status {
    Half& half = halves_[c % 2];
    // A ToDevice chunk may still be reading this half.
    PST_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(half.free));
    PST_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(half.host, src + c * kChunkBytes, chunk_bytes(c),
                                             cudaMemcpyDeviceToHost, stream_));
    PST_CUDA_RETURN_IF_ERROR(cudaEventRecord(half.free, stream_));
    return Status::OK();
  };
  // Chunk c+1's DMA runs while chunk c is copied out of its half.
  PST_RETURN_IF_ERROR(start_dma(0));
  for (size_t c = 0; c < chunks; ++c) {
    Half& half = halves_[c % 2];
    if (c + 1 < chunks) {
      // Chunk c+1 goes to the other half, which chunk c-1 has left.
      PST_RETURN_IF_ERROR(start_dma(c + 1));
    }
    PST_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(half.free));
    std::memcpy(dst + c * kChunkBytes, half.host, chunk_bytes(c));
  }
  return Status::OK();
}

}  // namespace pst

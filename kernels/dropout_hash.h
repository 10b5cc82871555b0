// The hash behind Kernels::DropoutMask, one definition for the CPU and the
// CUDA back ends (a __host__ __device__ function under nvcc), so that both
// draw the same mask: element i of a mask is decided by SplitMix64's output
// function applied to seed + (i + 1) * golden ratio, a counter-based draw
// that every element can compute on its own, in any order.
#ifndef PST_KERNELS_DROPOUT_HASH_H_
#define PST_KERNELS_DROPOUT_HASH_H_

#include <cstdint>

#ifdef __CUDACC__
#define PST_HOST_DEVICE __host__ __device__
#else
#define PST_HOST_DEVICE
#endif

namespace pst {

PST_HOST_DEVICE inline uint64_t DropoutHash(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The mask's element `index`: 0 (dropped) when the hash's top 24 bits, as
// u in [0, 1), fall below threshold / 2^24; else `scale`.
PST_HOST_DEVICE inline float DropoutMaskValue(uint64_t seed, uint64_t index, uint32_t threshold,
                                              float scale) {
  return (DropoutHash(seed, index) >> 40) < threshold ? 0.0f : scale;
}

}  // namespace pst

#undef PST_HOST_DEVICE

#endif  // PST_KERNELS_DROPOUT_HASH_H_

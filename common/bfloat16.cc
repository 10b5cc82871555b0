#include "common/bfloat16.h"

namespace pst {
namespace {

// Whole blocks go through a fixed-count loop, which GCC vectorises at -O2
// (its cheap cost model skips loops that need a scalar remainder); only the
// last n % kBlock elements are converted one at a time.
constexpr int64_t kBlock = 64;

// 1 for a NaN, an infinity, or a float32 that rounds to infinity (from the
// largest bfloat16 plus half its last place up), else 0.
uint32_t NarrowsToNonFinite(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0x7fffffffu) >= 0x7f7f8000u;
}

}  // namespace

void FloatToBFloat16(const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = FloatToBFloat16(in[i + j]);
  }
  for (; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
}

int64_t FloatToBFloat16Checked(const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  // Checked, then narrowed, a block at a time: the block is still in L1
  // for the narrowing, and each loop vectorises.
  constexpr int64_t kCheckedBlock = 1024;
  int64_t i = 0;
  for (; i + kCheckedBlock <= n; i += kCheckedBlock) {
    uint32_t non_finite = 0;
    for (int64_t j = 0; j < kCheckedBlock; ++j) non_finite |= NarrowsToNonFinite(in[i + j]);
    if (non_finite) break;
    FloatToBFloat16(in + i, out + i, kCheckedBlock);
  }
  for (; i < n; ++i) {
    if (NarrowsToNonFinite(in[i])) return i;
    out[i] = FloatToBFloat16(in[i]);
  }
  return n;
}

void BFloat16ToFloat(const uint16_t* __restrict in, float* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = BFloat16ToFloat(in[i + j]);
  }
  for (; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

}  // namespace pst

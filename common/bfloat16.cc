#include "common/bfloat16.h"

namespace pst {
namespace {

// Whole blocks go through a fixed-count loop, which GCC vectorises at -O2
// (its cheap cost model skips loops that need a scalar remainder); only the
// last n % kBlock elements are converted one at a time.
constexpr int64_t kBlock = 64;

}  // namespace

void FloatToBFloat16(const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = FloatToBFloat16(in[i + j]);
  }
  for (; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
}

void BFloat16ToFloat(const uint16_t* __restrict in, float* __restrict out, int64_t n) {
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = BFloat16ToFloat(in[i + j]);
  }
  for (; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

}  // namespace pst

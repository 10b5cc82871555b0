// Helpers shared by the kernel tests: random inputs and the error measures
// a float32 kernel is held to against its float64 reference.
#ifndef PST_KERNELS_TEST_UTIL_H_
#define PST_KERNELS_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"

namespace pst {

// n floats uniform in [lo, hi), the same for the same seed.
std::vector<float> RandomVector(int64_t n, float lo, float hi, uint32_t seed);

// n labels uniform in [0, classes).
std::vector<int32_t> RandomLabels(int64_t n, int classes, uint32_t seed);

// max |got - want| / max |want|: the normwise error a float GEMM is held to.
double NormwiseRelError(const std::vector<float>& got, const std::vector<double>& want);

// max over elements of |got - want| / |want| (|want| floored at `floor`).
double ElementwiseRelError(const std::vector<float>& got, const std::vector<double>& want,
                           double floor = 1e-30);

// The convolution geometry of (H, W, C) inputs and (R, S, C, K) filters.
Conv2DShape ConvShape(int64_t h, int64_t w, int64_t c, int64_t r, int64_t s, int64_t k,
                      int64_t stride = 1, int64_t padding = 0);

}  // namespace pst

#endif  // PST_KERNELS_TEST_UTIL_H_

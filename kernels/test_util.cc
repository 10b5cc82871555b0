#include "kernels/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace pst {

std::vector<float> RandomVector(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<int32_t> RandomLabels(int64_t n, int classes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(0, classes - 1);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(rng);
  return v;
}

double NormwiseRelError(const std::vector<float>& got, const std::vector<double>& want) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

double ElementwiseRelError(const std::vector<float>& got, const std::vector<double>& want,
                           double floor) {
  EXPECT_EQ(got.size(), want.size());
  double err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]) / std::max(std::abs(want[i]), floor));
  }
  return err;
}

Conv2DShape ConvShape(int64_t h, int64_t w, int64_t c, int64_t r, int64_t s, int64_t k,
                      int64_t stride, int64_t padding) {
  Conv2DShape shape;
  shape.height = h;
  shape.width = w;
  shape.in_channels = c;
  shape.filter_height = r;
  shape.filter_width = s;
  shape.out_channels = k;
  shape.stride = stride;
  shape.padding = padding;
  return shape;
}

}  // namespace pst

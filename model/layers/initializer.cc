#include "model/layers/initializer.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace pst {
namespace {

constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ULL;
constexpr uint64_t kFnvPrime = 1099511628211ULL;

uint64_t FnvMix(uint64_t hash, uint8_t byte) { return (hash ^ byte) * kFnvPrime; }

// Fan-in and fan-out as Keras/TensorFlow compute them; for a (in, out)
// matrix they are in and out.
void Fans(const Shape& shape, double* fan_in, double* fan_out) {
  if (shape.empty()) {
    *fan_in = *fan_out = 1;
  } else if (shape.size() == 1) {
    *fan_in = *fan_out = static_cast<double>(shape[0]);
  } else {
    double receptive_field = 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) receptive_field *= shape[i];
    *fan_in = static_cast<double>(shape[shape.size() - 2]) * receptive_field;
    *fan_out = static_cast<double>(shape.back()) * receptive_field;
  }
}

// FNV-1a 64 of the seed's 8 little-endian bytes, then the name's bytes.
// Not std::hash: its values may change between standard libraries.
uint64_t VariableSeed(uint64_t seed, const std::string& name) {
  uint64_t hash = kFnvOffsetBasis;
  for (int i = 0; i < 8; ++i) hash = FnvMix(hash, (seed >> (8 * i)) & 0xff);
  for (char c : name) hash = FnvMix(hash, static_cast<uint8_t>(c));
  return hash;
}

}  // namespace

Tensor InitializeVariable(const VariableSpec& spec, uint64_t seed) {
  Tensor tensor(spec.dtype, spec.shape);  // zero-filled
  switch (spec.initializer) {
    case Initializer::kZeros: return tensor;
    case Initializer::kOnes: {
      CHECK(spec.dtype == DType::kFloat32)
          << spec.name << ": ones needs float32, not " << DTypeName(spec.dtype);
      std::fill(tensor.f32(), tensor.f32() + tensor.num_elements(), 1.0f);
      return tensor;
    }
    case Initializer::kGlorotUniform: {
      CHECK(spec.dtype == DType::kFloat32)
          << spec.name << ": glorot uniform needs float32, not " << DTypeName(spec.dtype);
      double fan_in, fan_out;
      Fans(spec.shape, &fan_in, &fan_out);
      const double limit = std::sqrt(6.0 / (fan_in + fan_out));
      std::mt19937_64 rng(VariableSeed(seed, spec.name));
      // Not std::uniform_real_distribution: its algorithm differs between
      // standard libraries, and every process must agree on the values.
      // The top 24 bits give u in [0, 1) exactly representable in float.
      float* v = tensor.f32();
      for (int64_t i = 0; i < tensor.num_elements(); ++i) {
        const double u = static_cast<double>(rng() >> 40) * 0x1p-24;
        v[i] = static_cast<float>((2.0 * u - 1.0) * limit);
      }
      return tensor;
    }
  }
  LOG(FATAL) << spec.name << ": unknown initializer " << static_cast<int>(spec.initializer);
}

}  // namespace pst

// bfloat16: the upper 16 bits of an IEEE float32 (sign, 8 exponent bits, 7
// mantissa bits), so it covers float32's range with 3 significant digits.
// It is a wire format only (--wire_dtype=bfloat16 halves the bytes of pulls
// and pushes): values are stored and computed in float32 everywhere.
//
// Narrowing rounds to nearest, ties to even; NaN stays NaN (made quiet), an
// infinity stays infinite, and a float32 above the largest bfloat16 rounds to
// infinity, as IEEE rounding does. Widening is exact.
#ifndef PST_COMMON_BFLOAT16_H_
#define PST_COMMON_BFLOAT16_H_

#include <cstdint>
#include <cstring>

namespace pst {

inline uint16_t FloatToBFloat16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  // Adding 0x7fff plus the lowest kept bit rounds half-way cases to even.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  // Rounding could carry a NaN's mantissa into the sign or make it infinite:
  // truncate it instead and set the quiet bit.
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? quiet_nan : rounded);
}

inline float BFloat16ToFloat(uint16_t x) {
  const uint32_t bits = uint32_t{x} << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// 1 for a NaN or an infinity (every exponent bit set), else 0.
inline uint32_t IsNonFiniteBFloat16(uint16_t x) { return (x & 0x7f80u) == 0x7f80u; }

// out[i] = FloatToBFloat16(in[i]) for i in [0, n); vectorised loops. in and
// out may have any alignment but must not overlap.
void FloatToBFloat16(const float* in, uint16_t* out, int64_t n);
void BFloat16ToFloat(const uint16_t* in, float* out, int64_t n);

// FloatToBFloat16 that checks as it narrows (one pass where a finiteness
// check and a conversion took two): returns the index of the first NaN or
// infinity of in (n when there is none); out is then unspecified.
int64_t FloatToBFloat16Checked(const float* in, uint16_t* out, int64_t n);

}  // namespace pst

#endif  // PST_COMMON_BFLOAT16_H_

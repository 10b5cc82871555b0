// What narrowing float32 to bfloat16 and widening it back cost per byte of
// float32, against a memcpy of the same bytes: the conversion must cost less
// than the half of the bytes it saves on the wire.
#ifndef PST_BENCH_TRANSPORT_CONVERSION_SPEED_H_
#define PST_BENCH_TRANSPORT_CONVERSION_SPEED_H_

#include <cstddef>

namespace pst {

// GB/s of float32.
struct ConversionSpeed {
  size_t bytes = 0;  // of float32 converted per call
  double narrow = 0, widen = 0, memcpy = 0;
  // A worker's push: a finiteness check, then the narrowing (two passes),
  // against FloatToBFloat16Checked (one).
  double check_then_narrow = 0, narrow_checked = 0;
  // A ps's SGD apply of a bfloat16 gradient: widened into a scratch buffer,
  // then applied, against Optimizer::ApplyBFloat16 (widened as applied).
  double widen_then_apply = 0, widen_and_apply = 0;
};

// About 0.2 s per figure.
ConversionSpeed MeasureConversionSpeed(size_t bytes);

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_CONVERSION_SPEED_H_

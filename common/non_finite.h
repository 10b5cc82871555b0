// Finding a NaN or an infinity in a large buffer at memory speed: the ps
// checks every gradient it is pushed, the worker every gradient before it
// pushes it, a few megabytes per step each.
#ifndef PST_COMMON_NON_FINITE_H_
#define PST_COMMON_NON_FINITE_H_

#include <cstdint>

namespace pst {

// Index of the first NaN or infinity among x[0, n), or n when there is none.
int64_t FirstNonFinite(const float* x, int64_t n);
// The same over bfloat16 values (their bits).
int64_t FirstNonFinite(const uint16_t* x, int64_t n);

}  // namespace pst

#endif  // PST_COMMON_NON_FINITE_H_

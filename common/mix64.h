// Mix64: splitmix64's output function (Steele, Lea, Flood 2014), a
// bijection of 64-bit words whose every output bit depends on every input
// bit. Fixed arithmetic, so the same on every platform: rows made from it
// are the same wherever they are made.
#ifndef PST_COMMON_MIX64_H_
#define PST_COMMON_MIX64_H_

#include <cstdint>

namespace pst {

inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace pst

#endif  // PST_COMMON_MIX64_H_

#include "common/crc32.h"

#include <zlib.h>

namespace pst {

// crc32_z: crc32 takes at most 4 GiB at a time.
uint32_t Crc32(const void* data, size_t n) {
  return static_cast<uint32_t>(crc32_z(0, static_cast<const Bytef*>(data), n));
}

}  // namespace pst

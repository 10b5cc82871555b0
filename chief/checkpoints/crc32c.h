// CRC-32C (Castagnoli), the checksum TFRecord framing uses.
#ifndef PST_CHIEF_CHECKPOINTS_CRC32C_H_
#define PST_CHIEF_CHECKPOINTS_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace pst {

// CRC-32C of n bytes: reflected polynomial 0x82F63B78, initial value and final
// xor 0xFFFFFFFF. Crc32c("123456789", 9) == 0xE3069283.
uint32_t Crc32c(const void* data, size_t n);

}  // namespace pst

#endif  // PST_CHIEF_CHECKPOINTS_CRC32C_H_

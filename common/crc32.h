// CRC-32 (ISO-HDLC, zlib's), the checksum of tensor files and checkpoint
// manifests. Not CRC-32C: TensorBoard's framing uses that one
// (chief/checkpoints/crc32c.h).
#ifndef PST_COMMON_CRC32_H_
#define PST_COMMON_CRC32_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace pst {

// CRC-32 of n bytes: Crc32("123456789", 9) == 0xCBF43926.
uint32_t Crc32(const void* data, size_t n);
inline uint32_t Crc32(const std::string& bytes) { return Crc32(bytes.data(), bytes.size()); }

}  // namespace pst

#endif  // PST_COMMON_CRC32_H_

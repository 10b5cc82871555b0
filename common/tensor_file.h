// Tensor files: named tensors in one file, with a CRC32 of the contents.
//
// Layout (little-endian): "PSTENSOR", u32 format version (1), u32 count, then
// per tensor: u32 name length, name bytes, u8 dtype, u32 rank, i64 dims[rank],
// u64 byte length, bytes; then u32 CRC32 of everything before it.
// Written with WriteFileAtomically, so a reader never sees a half-written
// file.
#ifndef PST_COMMON_TENSOR_FILE_H_
#define PST_COMMON_TENSOR_FILE_H_

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"

namespace pst {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// What a checkpoint manifest records of a file: its size and the CRC-32 of
// its contents, every byte but the last four. (A tensor file ends with that
// CRC-32 itself, so the CRC-32 of a whole intact one is always the same
// constant and would tell one part from another not at all.)
struct FileDigest {
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
};

StatusOr<FileDigest> WriteTensorFile(const std::string& path, const NamedTensors& tensors);
// NotFound or Unavailable naming the file when it cannot be read, DataLoss
// when it is shorter than four bytes.
StatusOr<FileDigest> DigestFile(const std::string& path);
// DataLoss (naming the file) for a truncated, corrupt or foreign file.
StatusOr<NamedTensors> ReadTensorFile(const std::string& path);

}  // namespace pst

#endif  // PST_COMMON_TENSOR_FILE_H_

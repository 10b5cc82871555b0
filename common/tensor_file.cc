#include "common/tensor_file.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "common/atomic_file.h"
#include "common/crc32.h"

namespace pst {
namespace {

constexpr char kMagic[8] = {'P', 'S', 'T', 'E', 'N', 'S', 'O', 'R'};
constexpr uint32_t kFormatVersion = 1;

template <typename T>
void Put(std::string* out, T value) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(value));
}

class Reader {
 public:
  Reader(const std::string& data, size_t end) : data_(data), end_(end) {}
  template <typename T>
  bool Get(T* value) {
    if (end_ - pos_ < sizeof(T)) return false;
    std::memcpy(value, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Bytes(size_t n, const char** p) {
    if (end_ - pos_ < n) return false;
    *p = data_.data() + pos_;
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == end_; }

 private:
  const std::string& data_;
  size_t end_;
  size_t pos_ = 0;
};

StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Unavailable("reading " + path + " failed");
  return data;
}

FileDigest Digest(const std::string& data) {
  return FileDigest{data.size(), Crc32(data.data(), data.size() - sizeof(uint32_t))};
}

}  // namespace

StatusOr<FileDigest> DigestFile(const std::string& path) {
  PST_ASSIGN_OR_RETURN(std::string data, ReadWhole(path));
  if (data.size() < sizeof(uint32_t)) return DataLoss(path + " is truncated");
  return Digest(data);
}

StatusOr<FileDigest> WriteTensorFile(const std::string& path, const NamedTensors& tensors) {
  std::string out(kMagic, sizeof(kMagic));
  Put<uint32_t>(&out, kFormatVersion);
  Put<uint32_t>(&out, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, t] : tensors) {
    Put<uint32_t>(&out, static_cast<uint32_t>(name.size()));
    out += name;
    Put<uint8_t>(&out, static_cast<uint8_t>(t.dtype()));
    Put<uint32_t>(&out, static_cast<uint32_t>(t.shape().size()));
    for (int64_t d : t.shape()) Put<int64_t>(&out, d);
    Put<uint64_t>(&out, t.num_bytes());
    out.append(static_cast<const char*>(t.data()), t.num_bytes());
  }
  Put<uint32_t>(&out, Crc32(out.data(), out.size()));
  PST_RETURN_IF_ERROR(WriteFileAtomically(path, out));
  return Digest(out);
}

StatusOr<NamedTensors> ReadTensorFile(const std::string& path) {
  PST_ASSIGN_OR_RETURN(const std::string data, ReadWhole(path));
  const Status corrupt = DataLoss(path + " is truncated or corrupt");
  if (data.size() < sizeof(kMagic) + 12 || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0) {
    return DataLoss(path + " is not a tensor file (bad magic)");
  }
  const size_t body = data.size() - sizeof(uint32_t);
  uint32_t stored_crc;
  std::memcpy(&stored_crc, data.data() + body, sizeof(stored_crc));
  if (Crc32(data.data(), body) != stored_crc) {
    return DataLoss(path + " fails its checksum");
  }
  Reader r(data, body);
  const char* skip;
  uint32_t version = 0, count = 0;
  if (!r.Bytes(sizeof(kMagic), &skip) || !r.Get(&version) || !r.Get(&count)) return corrupt;
  if (version != kFormatVersion) {
    return DataLoss(path + " has format version " + std::to_string(version));
  }
  NamedTensors tensors;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t name_len = 0, rank = 0;
    uint8_t dtype = 0;
    const char* name;
    if (!r.Get(&name_len) || !r.Bytes(name_len, &name) || !r.Get(&dtype) || !r.Get(&rank) ||
        dtype > static_cast<uint8_t>(DType::kInt64) || rank > 8) {
      return corrupt;
    }
    Shape shape(rank);
    for (auto& d : shape) {
      if (!r.Get(&d) || d < 0) return corrupt;
    }
    uint64_t bytes = 0;
    const char* payload;
    if (!r.Get(&bytes) || !r.Bytes(bytes, &payload)) return corrupt;
    // The shape must describe exactly `bytes` before anything is allocated:
    // checked without overflow, since the dims come from the file.
    uint64_t elements = 1;
    for (int64_t d : shape) {
      if (d != 0 && elements > bytes / static_cast<uint64_t>(d)) return corrupt;
      elements *= static_cast<uint64_t>(d);
    }
    if (elements * DTypeSize(static_cast<DType>(dtype)) != bytes) return corrupt;
    Tensor t = Tensor::Uninitialized(static_cast<DType>(dtype), shape);
    std::memcpy(t.data(), payload, bytes);
    tensors.emplace_back(std::string(name, name_len), std::move(t));
  }
  if (!r.at_end()) return corrupt;
  return tensors;
}

}  // namespace pst

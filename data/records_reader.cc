#include "data/records_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

namespace pst {
namespace {

StatusOr<std::vector<uint8_t>> ReadFile(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) return DataLoss(path + ": read failed");
  return bytes;
}

// Value i of a record's channel-major values, as the model reads it.
float ValueAt(const uint8_t* values, int64_t i, RecordDtype dtype) {
  if (dtype == RecordDtype::kUint8) return values[i] / 255.0f;
  // Little-endian float32, as numpy's '<f4' writes it (memcpy: the record
  // may sit at any alignment; every host pstrain builds on is little-endian).
  float v;
  std::memcpy(&v, values + i * sizeof(float), sizeof(float));
  return v;
}

}  // namespace

StatusOr<RecordDtype> ParseRecordDtype(const std::string& name) {
  if (name == "uint8") return RecordDtype::kUint8;
  if (name == "float32") return RecordDtype::kFloat32;
  return InvalidArgument("unknown record dtype '" + name + "'; known: uint8, float32");
}

StatusOr<Dataset> ReadRecordsDataset(const std::vector<std::string>& paths,
                                     const RecordsOptions& options) {
  const std::vector<int64_t>& dims = options.image.dims();
  if ((!options.image.is_image() && dims.size() != 1) ||
      std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 1; })) {
    return InvalidArgument("records need an input shape H,W,C (or D) of positive numbers");
  }
  if (options.label_bytes < 1) {
    return InvalidArgument("a record's label takes at least 1 byte, not " +
                           std::to_string(options.label_bytes));
  }
  if (paths.empty()) return InvalidArgument("no records file given");
  // A shape of D features reads as one 1x1xD image: channel-major is then
  // the features in order.
  const int64_t height = options.image.height(), width = options.image.width();
  const int64_t channels = options.image.channels();
  const int64_t pixels = height * width * channels;
  const bool floats = options.dtype == RecordDtype::kFloat32;
  const int64_t value_bytes = floats ? sizeof(float) : 1;
  const int64_t record_bytes = options.label_bytes + pixels * value_bytes;

  Dataset dataset;
  dataset.feature_dim = pixels;
  dataset.example_shape = options.image;
  int32_t max_label = -1;
  for (const std::string& path : paths) {
    PST_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFile(path));
    const int64_t size = static_cast<int64_t>(bytes.size());
    if (size == 0 || size % record_bytes != 0) {
      return DataLoss(path + ": " + std::to_string(size) + " bytes is not a whole number of " +
                      std::to_string(record_bytes) + "-byte records (" +
                      std::to_string(options.label_bytes) + " label + " + std::to_string(height) +
                      "x" + std::to_string(width) + "x" + std::to_string(channels) +
                      (floats ? " float32 values" : " pixels") +
                      "); truncated, or another record size");
    }
    const int64_t count = size / record_bytes;
    dataset.features.reserve(dataset.features.size() + count * pixels);
    for (int64_t r = 0; r < count; ++r) {
      const uint8_t* record = bytes.data() + r * record_bytes;
      const int32_t label = record[options.label_bytes - 1];
      if (options.num_classes > 0 && label >= options.num_classes) {
        return InvalidArgument(path + ": record " + std::to_string(r) + ": label " +
                               std::to_string(label) + " is outside [0, " +
                               std::to_string(options.num_classes) + ")");
      }
      max_label = std::max(max_label, label);
      dataset.labels.push_back(label);
      // Channel-major in the file, HWC in memory.
      const uint8_t* values = record + options.label_bytes;
      const size_t start = dataset.features.size();
      dataset.features.resize(start + pixels);
      float* out = dataset.features.data() + start;
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < height * width; ++i) {
          const int64_t in = c * height * width + i;
          const float v = ValueAt(values, in, options.dtype);
          if (!std::isfinite(v)) {
            return InvalidArgument(path + ": record " + std::to_string(r) + ": value " +
                                   std::to_string(in) + " is not a finite number (" +
                                   std::to_string(v) + ")");
          }
          out[i * channels + c] = v;
        }
      }
    }
    dataset.size += count;
  }
  dataset.num_classes = options.num_classes > 0 ? options.num_classes : max_label + 1;
  return dataset;
}

}  // namespace pst

#include "data/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <vector>

namespace pst {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803;  // unsigned bytes, 3 dims
constexpr uint32_t kLabelsMagic = 0x00000801;  // unsigned bytes, 1 dim
constexpr int kMnistClasses = 10;

std::string Hex32(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%08x", value);
  return buffer;
}

uint32_t ReadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct GzCloser {
  void operator()(gzFile file) const { gzclose(file); }
};

// A file's bytes, decompressed if it is gzip. `complete` is false when the
// gzip stream ends early: the bytes before the cut are kept so the caller can
// still say how many of the bytes it expected are there.
struct FileContents {
  std::vector<uint8_t> bytes;
  bool complete = true;
};

// zlib's gzread passes a file without the gzip magic bytes through unchanged,
// so one code path reads both kinds, told apart by content, not by name.
StatusOr<FileContents> ReadFile(const std::string& path) {
  errno = 0;
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    if (errno == EACCES) return PermissionDenied(path + ": permission denied");
    return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  }
  // Large reads keep the 47 MB MNIST training images to a few dozen calls.
  constexpr unsigned kChunk = 8u << 20;
  gzbuffer(file.get(), 1u << 20);
  FileContents contents;
  for (;;) {
    const size_t old_size = contents.bytes.size();
    contents.bytes.resize(old_size + kChunk);
    const int n = gzread(file.get(), contents.bytes.data() + old_size, kChunk);
    if (n < 0) {
      int errnum = 0;
      return DataLoss(path + ": read failed: " + gzerror(file.get(), &errnum));
    }
    contents.bytes.resize(old_size + n);
    if (static_cast<unsigned>(n) < kChunk) break;
  }
  int errnum = Z_OK;
  gzerror(file.get(), &errnum);
  // Z_BUF_ERROR at the end of input is zlib's "unexpected end of file".
  contents.complete = errnum != Z_BUF_ERROR;
  return contents;
}

// The dimensions of an IDX file and where its data bytes begin.
struct IdxView {
  std::vector<uint32_t> dims;
  const uint8_t* data = nullptr;
};

// Checks the magic number and that the data is exactly as long as the
// dimensions in the header say. `contents` must outlive the returned view.
StatusOr<IdxView> ParseIdx(const std::string& path, const FileContents& contents,
                           uint32_t expected_magic) {
  const std::vector<uint8_t>& bytes = contents.bytes;
  const std::string cut = contents.complete ? "" : " (the gzip stream ends early)";
  if (bytes.size() < 4) {
    return DataLoss(path + ": expected a 4-byte IDX magic number, file has " +
                    std::to_string(bytes.size()) + " bytes" + cut);
  }
  const uint32_t magic = ReadBigEndian32(bytes.data());
  if (magic != expected_magic) {
    return InvalidArgument(path + ": IDX magic number is " + Hex32(magic) + ", expected " +
                           Hex32(expected_magic));
  }
  const size_t num_dims = magic & 0xff;
  const size_t header_bytes = 4 + 4 * num_dims;
  if (bytes.size() < header_bytes) {
    return DataLoss(path + ": expected a " + std::to_string(header_bytes) +
                    "-byte IDX header, file has " + std::to_string(bytes.size()) + " bytes" + cut);
  }
  IdxView view;
  uint64_t expected = 1;
  std::string shape;
  for (size_t i = 0; i < num_dims; ++i) {
    const uint32_t dim = ReadBigEndian32(bytes.data() + 4 + 4 * i);
    view.dims.push_back(dim);
    shape += (i == 0 ? "" : " x ") + std::to_string(dim);
    if (dim != 0 && expected > std::numeric_limits<uint64_t>::max() / dim) {
      return DataLoss(path + ": header dimensions " + shape + "... overflow");
    }
    expected *= dim;
  }
  const uint64_t actual = bytes.size() - header_bytes;
  if (actual != expected) {
    return DataLoss(path + ": header declares " + shape + " = " + std::to_string(expected) +
                    " data bytes, file has " + std::to_string(actual) + " after its " +
                    std::to_string(header_bytes) + "-byte header" + cut);
  }
  if (!contents.complete) {
    return DataLoss(path + ": gzip stream ends early (its trailer is missing)");
  }
  view.data = bytes.data() + header_bytes;
  return view;
}

// Returns dir/name.gz or dir/name, whichever exists (in that order).
StatusOr<std::string> FindMnistFile(const std::string& dir, const std::string& name) {
  const std::string base = dir + "/" + name;
  for (const std::string& path : {base + ".gz", base}) {
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) return path;
  }
  return NotFound("MNIST file not found: looked for " + base + ".gz and " + base +
                  "; fetch MNIST with scripts/get_mnist.sh " + dir);
}

}  // namespace

StatusOr<Dataset> ReadIdxDataset(const std::string& images_path, const std::string& labels_path) {
  PST_ASSIGN_OR_RETURN(const FileContents images, ReadFile(images_path));
  PST_ASSIGN_OR_RETURN(const IdxView image_view, ParseIdx(images_path, images, kImagesMagic));
  PST_ASSIGN_OR_RETURN(const FileContents labels, ReadFile(labels_path));
  PST_ASSIGN_OR_RETURN(const IdxView label_view, ParseIdx(labels_path, labels, kLabelsMagic));
  if (image_view.dims[0] != label_view.dims[0]) {
    return InvalidArgument(images_path + " holds " + std::to_string(image_view.dims[0]) +
                           " images but " + labels_path + " holds " +
                           std::to_string(label_view.dims[0]) + " labels");
  }

  Dataset dataset;
  dataset.size = image_view.dims[0];
  dataset.feature_dim = int64_t{image_view.dims[1]} * image_view.dims[2];
  dataset.example_shape = InputShape({image_view.dims[1], image_view.dims[2], 1});
  dataset.num_classes = kMnistClasses;
  dataset.labels.resize(dataset.size);
  for (int64_t i = 0; i < dataset.size; ++i) {
    const int label = label_view.data[i];
    if (label >= kMnistClasses) {
      return InvalidArgument(labels_path + ": label " + std::to_string(label) + " of example " +
                             std::to_string(i) + " is outside 0..9");
    }
    dataset.labels[i] = label;
  }
  dataset.features.resize(dataset.size * dataset.feature_dim);
  const uint8_t* pixels = image_view.data;
  for (size_t i = 0; i < dataset.features.size(); ++i) {
    dataset.features[i] = pixels[i] / 255.0f;
  }
  return dataset;
}

StatusOr<Dataset> LoadMnist(const std::string& dir, bool train) {
  if (dir.empty()) {
    return InvalidArgument("no MNIST directory given; fetch MNIST with scripts/get_mnist.sh DIR");
  }
  const std::string prefix = train ? "train" : "t10k";
  PST_ASSIGN_OR_RETURN(const std::string images_path,
                       FindMnistFile(dir, prefix + "-images-idx3-ubyte"));
  PST_ASSIGN_OR_RETURN(const std::string labels_path,
                       FindMnistFile(dir, prefix + "-labels-idx1-ubyte"));
  return ReadIdxDataset(images_path, labels_path);
}

}  // namespace pst

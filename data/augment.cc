#include "data/augment.h"

#include <glog/logging.h>

#include <algorithm>
#include <vector>

#include "common/parse_number.h"
#include "common/split.h"

namespace pst {
namespace {

constexpr char kKnown[] = "known: crop, crop:PAD, flip";

// Uniform in [0, n): the modulo's bias, below n / 2^64, is negligible.
int64_t Draw(std::mt19937_64* rng, int64_t n) { return static_cast<int64_t>((*rng)() % n); }

}  // namespace

StatusOr<AugmentOptions> ParseAugmentOptions(const std::string& list) {
  AugmentOptions options;
  if (list.empty()) return options;
  bool crop = false;
  for (const std::string& name : SplitCommas(list)) {
    const bool is_crop = name == "crop" || name.rfind("crop:", 0) == 0;
    if ((is_crop && crop) || (name == "flip" && options.flip)) {
      return InvalidArgument("augmentation '" + name + "' given twice in '" + list + "'");
    }
    if (name == "flip") {
      options.flip = true;
    } else if (name == "crop") {
      options.crop_padding = kDefaultCropPadding;
    } else if (is_crop) {
      if (!ParseNumber(name.substr(5), &options.crop_padding) || options.crop_padding < 0) {
        return InvalidArgument("bad crop padding in '" + name +
                               "': a non-negative number of pixels");
      }
    } else {
      return InvalidArgument("unknown augmentation '" + name + "' in '" + list + "' (" + kKnown +
                             ")");
    }
    crop = crop || is_crop;
  }
  return options;
}

std::mt19937_64 AugmentGenerator(uint64_t seed, int worker_index, int64_t epoch,
                                 int64_t batch_in_epoch) {
  const uint64_t e = static_cast<uint64_t>(epoch), b = static_cast<uint64_t>(batch_in_epoch);
  std::seed_seq seq{static_cast<uint32_t>(seed),         static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(worker_index), static_cast<uint32_t>(e),
                    static_cast<uint32_t>(e >> 32),      static_cast<uint32_t>(b),
                    static_cast<uint32_t>(b >> 32)};
  return std::mt19937_64(seq);
}

void ShiftAndFlipImage(const float* in, const InputShape& shape, int64_t row_shift,
                       int64_t col_shift, bool flip, float* out) {
  const int64_t height = shape.height(), width = shape.width(), channels = shape.channels();
  for (int64_t i = 0; i < height; ++i) {
    for (int64_t j = 0; j < width; ++j) {
      const int64_t from_i = i + row_shift;
      const int64_t from_j = (flip ? width - 1 - j : j) + col_shift;
      const bool inside = from_i >= 0 && from_i < height && from_j >= 0 && from_j < width;
      for (int64_t c = 0; c < channels; ++c) {
        out[(i * width + j) * channels + c] =
            inside ? in[(from_i * width + from_j) * channels + c] : 0.0f;
      }
    }
  }
}

void AugmentBatch(const AugmentOptions& options, const InputShape& shape, std::mt19937_64* rng,
                  Batch* batch) {
  CHECK(shape.is_image()) << "augmenting " << shape.ToString();
  CHECK_EQ(shape.size(), batch->feature_dim) << "augmenting " << shape.ToString();
  const int64_t pad = options.crop_padding;
  std::vector<float> image(shape.size());
  for (int64_t k = 0; k < batch->size; ++k) {
    const int64_t row_shift = pad > 0 ? Draw(rng, 2 * pad + 1) - pad : 0;
    const int64_t col_shift = pad > 0 ? Draw(rng, 2 * pad + 1) - pad : 0;
    const bool flip = options.flip && Draw(rng, 2) == 1;
    float* features = batch->features.data() + k * shape.size();
    ShiftAndFlipImage(features, shape, row_shift, col_shift, flip, image.data());
    std::copy(image.begin(), image.end(), features);
  }
}

}  // namespace pst

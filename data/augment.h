// Image augmentation of training batches: a random crop after zero padding
// (a shift of up to `crop_padding` pixels each way, the emptied border zero)
// and an optional horizontal flip with probability 1/2 (off by default:
// mirrored digits are other digits). Images are stored HWC, one per row of
// Batch::features, as Dataset::example_shape says; labels are untouched.
// Zero is the background only before --normalize shifts the pixels, so the
// augmentation runs on the raw pixels, before standardization.
//
// Reproducible: the random choices come from a std::mt19937_64 the caller
// owns, drawn from with the standard-specified raw output only (no
// std::*_distribution, whose algorithms differ between standard libraries).
// AugmentGenerator gives each batch its own generator, a function of (seed,
// worker, epoch, batch in epoch) alone, like the pipeline's shuffle: the
// same run augments the same batch the same way wherever and whenever it is
// prepared (a restarted worker too), and workers differ.
//
// Meant use, once wired: --augment=crop,flip is ParseAugmentOptions'd at
// startup (refused unless the training data are images), and the input
// pipeline's Gather runs AugmentBatch(options, example_shape, &rng, &batch)
// with rng = AugmentGenerator(seed, worker_index, epoch, batch_in_epoch), on
// training batches only, never on validation or test data.
#ifndef PST_DATA_AUGMENT_H_
#define PST_DATA_AUGMENT_H_

#include <cstdint>
#include <random>
#include <string>

#include "common/batch.h"
#include "common/input_shape.h"
#include "common/status.h"

namespace pst {

// The padding "crop" alone means: 4 pixels, as for CIFAR-10 in the ResNet
// paper.
inline constexpr int64_t kDefaultCropPadding = 4;

struct AugmentOptions {
  int64_t crop_padding = 0;  // 0: no crop
  bool flip = false;
};

// A comma-separated list of "crop" (kDefaultCropPadding), "crop:PAD" (PAD a
// non-negative integer) and "flip"; "" is no augmentation. InvalidArgument
// for an unknown or repeated name or a bad PAD, naming it.
StatusOr<AugmentOptions> ParseAugmentOptions(const std::string& list);

// The generator for batch `batch_in_epoch` of `epoch` on worker
// `worker_index` of a run seeded `seed`.
std::mt19937_64 AugmentGenerator(uint64_t seed, int worker_index, int64_t epoch,
                                 int64_t batch_in_epoch);

// One image shifted, then mirrored: out(i, j, c) = in(i + row_shift,
// j' + col_shift, c), j' = W-1-j when `flip` and j otherwise, and 0 where
// that pixel lies outside the image. (A crop after padding p is a shift by
// offsets in [-p, p].) `in` and `out` hold shape.size() floats and do not
// overlap.
void ShiftAndFlipImage(const float* in, const InputShape& shape, int64_t row_shift,
                       int64_t col_shift, bool flip, float* out);

// Augments every image of *batch in place, in order: for each image a row
// then a column shift uniform in [-crop_padding, crop_padding] (when
// cropping), then a flip with probability 1/2 (when flipping). `shape` is
// an image of batch->feature_dim values (CHECKed).
void AugmentBatch(const AugmentOptions& options, const InputShape& shape, std::mt19937_64* rng,
                  Batch* batch);

}  // namespace pst

#endif  // PST_DATA_AUGMENT_H_

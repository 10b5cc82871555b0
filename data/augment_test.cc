#include "data/augment.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace pst {
namespace {

// 1..16 row by row: a 4x4 image with one channel.
std::vector<float> Counting4x4(float first = 1) {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = first + static_cast<float>(i);
  return v;
}

// `size` images of `shape` with distinct values, labels 0, 1, ...
Batch RandomImages(int64_t size, const InputShape& shape) {
  Batch batch;
  batch.size = size;
  batch.feature_dim = shape.size();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pixel(0.1f, 1);
  for (int64_t i = 0; i < size * shape.size(); ++i) batch.features.push_back(pixel(rng));
  for (int64_t i = 0; i < size; ++i) batch.labels.push_back(static_cast<int32_t>(i));
  return batch;
}

std::string ParseError(const std::string& list) {
  StatusOr<AugmentOptions> options = ParseAugmentOptions(list);
  EXPECT_FALSE(options.ok()) << list;
  if (options.ok()) return "";
  EXPECT_EQ(options.status().code(), Code::kInvalidArgument) << list;
  return options.status().message();
}

TEST(AugmentTest, ParsesNamesAndPadding) {
  AugmentOptions options = ParseAugmentOptions("crop,flip").value();
  EXPECT_EQ(options.crop_padding, kDefaultCropPadding);
  EXPECT_TRUE(options.flip);
  options = ParseAugmentOptions("crop:2").value();
  EXPECT_EQ(options.crop_padding, 2);
  EXPECT_FALSE(options.flip);
  options = ParseAugmentOptions("flip").value();
  EXPECT_EQ(options.crop_padding, 0);
  EXPECT_TRUE(options.flip);
  options = ParseAugmentOptions("").value();
  EXPECT_EQ(options.crop_padding, 0);
  EXPECT_FALSE(options.flip);
}

TEST(AugmentTest, ParseNamesWhatItRefuses) {
  EXPECT_EQ(ParseError("crop,rotate"),
            "unknown augmentation 'rotate' in 'crop,rotate' (known: crop, crop:PAD, flip)");
  EXPECT_NE(ParseError("crop,,flip").find("unknown augmentation ''"), std::string::npos);
  EXPECT_NE(ParseError("Flip").find("'Flip'"), std::string::npos);
  EXPECT_NE(ParseError("crop:-1").find("bad crop padding in 'crop:-1'"), std::string::npos);
  EXPECT_NE(ParseError("crop:x").find("bad crop padding"), std::string::npos);
  EXPECT_NE(ParseError("crop:").find("bad crop padding"), std::string::npos);
  EXPECT_NE(ParseError("flip,flip").find("'flip' given twice"), std::string::npos);
  EXPECT_NE(ParseError("crop,crop:2").find("'crop:2' given twice"), std::string::npos);
}

TEST(AugmentTest, ShiftZeroFillsTheBorder) {
  const std::vector<float> in = Counting4x4();
  std::vector<float> out(16);
  // A crop at the padded image's corner: one row and column of padding.
  ShiftAndFlipImage(in.data(), InputShape({4, 4, 1}), -1, -1, /*flip=*/false, out.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0,  //
                                     0, 1, 2, 3,  //
                                     0, 5, 6, 7,  //
                                     0, 9, 10, 11}));
}

TEST(AugmentTest, FlipMirrorsPixelsWithTheirChannels) {
  // 2x3 pixels of 2 channels: (i, j) holds {10i + j + 1, 100 + 10i + j + 1}.
  const std::vector<float> in = {1, 101, 2, 102, 3, 103, 11, 111, 12, 112, 13, 113};
  std::vector<float> out(12);
  ShiftAndFlipImage(in.data(), InputShape({2, 3, 2}), 0, -1, /*flip=*/true, out.data());
  EXPECT_EQ(out, (std::vector<float>{2, 102, 1, 101, 0, 0, 12, 112, 11, 111, 0, 0}));
}

// Seed 3's first draws (mt19937_64 is specified by the standard): image 0
// shifted by (1, 0) and flipped, image 1 by (0, 1) and not flipped.
TEST(AugmentTest, SeededBatchMatchesHandCheckedImages) {
  Batch batch;
  batch.size = 2;
  batch.feature_dim = 16;
  batch.features = Counting4x4();
  const std::vector<float> second = Counting4x4(17);
  batch.features.insert(batch.features.end(), second.begin(), second.end());
  batch.labels = {7, 3};
  std::mt19937_64 rng(3);
  AugmentBatch({/*crop_padding=*/1, /*flip=*/true}, InputShape({4, 4, 1}), &rng, &batch);
  EXPECT_EQ(batch.features, (std::vector<float>{8,  7,  6,  5,   //
                                                12, 11, 10, 9,   //
                                                16, 15, 14, 13,  //
                                                0,  0,  0,  0,   //
                                                18, 19, 20, 0,   //
                                                22, 23, 24, 0,   //
                                                26, 27, 28, 0,   //
                                                30, 31, 32, 0}));
  EXPECT_EQ(batch.labels, (std::vector<int32_t>{7, 3}));
}

TEST(AugmentTest, SameBatchAndWorkerGiveTheSameImagesOthersDiffer) {
  const InputShape shape({6, 5, 2});
  const AugmentOptions options = {2, true};
  const auto augmented = [&](int worker, int64_t batch_in_epoch) {
    Batch batch = RandomImages(8, shape);
    std::mt19937_64 rng = AugmentGenerator(/*seed=*/11, worker, /*epoch=*/0, batch_in_epoch);
    AugmentBatch(options, shape, &rng, &batch);
    EXPECT_EQ(batch.labels, RandomImages(8, shape).labels);
    return batch.features;
  };
  const std::vector<float> first = augmented(0, 0);
  EXPECT_NE(first, RandomImages(8, shape).features);
  EXPECT_EQ(augmented(0, 0), first);
  EXPECT_NE(augmented(1, 0), first);
  EXPECT_NE(augmented(0, 1), first);
}

TEST(AugmentTest, NoCropNoFlipIsTheIdentity) {
  const InputShape shape({3, 4, 3});
  Batch batch = RandomImages(5, shape);
  const Batch original = batch;
  std::mt19937_64 rng(1);
  AugmentBatch(ParseAugmentOptions("crop:0").value(), shape, &rng, &batch);
  EXPECT_EQ(batch.features, original.features);
  EXPECT_EQ(batch.labels, original.labels);
}

TEST(AugmentTest, RefusesFeatureVectors) {
  Batch batch = RandomImages(2, 12);
  std::mt19937_64 rng(1);
  EXPECT_DEATH(AugmentBatch({1, false}, 12, &rng, &batch), "augmenting 12 features");
}

}  // namespace
}  // namespace pst

#include "transport/shm/ring_size.h"

#include <gtest/gtest.h>

#include <vector>

namespace pst {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(RingSizeTest, ALinkTakesWhatItWantsWhereThereIsRoom) {
  EXPECT_EQ(RingBytesFor(16 * kMiB, uint64_t{1} << 30), 16 * kMiB);
  EXPECT_EQ(RingBytesFor(16 * kMiB, 64 * kMiB), 16 * kMiB);  // the pair: half of 64
}

TEST(RingSizeTest, SixtyFourMiBHoldsFivePairsOfShrinkingRings) {
  // Docker's default /dev/shm, each link taking its rings from what the
  // ones before it left.
  uint64_t free_bytes = 64 * kMiB;
  std::vector<size_t> rings;
  while (const size_t ring = RingBytesFor(16 * kMiB, free_bytes)) {
    rings.push_back(ring);
    free_bytes -= 2 * ring;
  }
  EXPECT_EQ(rings, (std::vector<size_t>{16 * kMiB, 8 * kMiB, 4 * kMiB, 2 * kMiB, kMiB}));
  EXPECT_EQ(free_bytes, 2 * kMiB);
}

TEST(RingSizeTest, TooLittleRoomMeansNoRings) {
  EXPECT_EQ(RingBytesFor(16 * kMiB, 4 * kMiB - 1), 0u);
  EXPECT_EQ(RingBytesFor(16 * kMiB, 0), 0u);
}

TEST(RingSizeTest, RingsAskedSmallerThanTheLeastAreTakenWhole) {
  EXPECT_EQ(RingBytesFor(kMiB / 4, 4 * kMiB), kMiB / 4);
  EXPECT_EQ(RingBytesFor(kMiB / 4, kMiB - 1), 0u);  // not halved below what was asked
  EXPECT_EQ(RingBytesFor(0, 4 * kMiB), 0u);
}

TEST(RingSizeTest, FreeBytesOfAFileSystemAndOfNoDirectory) {
  const std::optional<uint64_t> free_bytes = FreeBytesAt("/dev/shm");
  ASSERT_TRUE(free_bytes.has_value());
  EXPECT_GT(*free_bytes, 0u);
  EXPECT_FALSE(FreeBytesAt("/no/such/directory").has_value());
}

}  // namespace
}  // namespace pst

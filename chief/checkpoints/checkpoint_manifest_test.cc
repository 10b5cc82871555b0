#include "chief/checkpoints/checkpoint_manifest.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

namespace pst {
namespace {

std::string Folder(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

CheckpointManifest Sample() {
  return {1200, 0xabcdef12345ull, 42, {{4096, 0xdeadbeef}, {128, 7}}, 1790000000, 3};
}

TEST(CheckpointManifestTest, RoundTrip) {
  const std::string dir = Folder("manifest-roundtrip");
  ASSERT_TRUE(WriteManifest(dir, Sample()).ok());
  auto read = ReadManifest(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->step, 1200);
  EXPECT_EQ(read->placement_hash, 0xabcdef12345ull);
  EXPECT_EQ(read->cluster_id, 42u);
  ASSERT_EQ(read->parts.size(), 2u);
  EXPECT_EQ(read->parts[0].crc32, 0xdeadbeefu);
  EXPECT_EQ(read->parts[1].bytes, 128u);
  EXPECT_EQ(read->run_started_unix, 1790000000);
  EXPECT_EQ(read->lr_lowerings, 3);
  EXPECT_EQ(read->format_version, 2);
}

// Manifests written before a plateau's lowerings were recorded read as
// none; a bad count is corrupt.
TEST(CheckpointManifestTest, LrLoweringsAbsentAreNoneAndNegativeIsCorrupt) {
  const std::string dir = Folder("manifest-lowerings");
  const auto write = [&](const std::string& tail) {
    const std::string body =
        "pstrain-checkpoint 2\nstep 5\nplacement_hash 9\ncluster_id 3\nparts 1\n"
        "part ps-0.part 10 11\nrun_started_unix 1790000000\n" +
        tail;
    std::ofstream(dir + "/manifest")
        << body << "crc32 " << crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())
        << "\n";
  };
  write("");
  auto read = ReadManifest(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->run_started_unix, 1790000000);
  EXPECT_EQ(read->lr_lowerings, 0);
  write("lr_lowerings -2\n");
  EXPECT_EQ(ReadManifest(dir).status().code(), Code::kDataLoss);
}

// Manifests written before the run's start was recorded still restore.
TEST(CheckpointManifestTest, ReadsAManifestWithoutTheRunStart) {
  const std::string dir = Folder("manifest-older");
  const std::string body =
      "pstrain-checkpoint 1\nstep 5\nplacement_hash 9\ncluster_id 3\nparts 1\n"
      "part ps-0.part 10 11\n";
  std::ofstream(dir + "/manifest")
      << body << "crc32 " << crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())
      << "\n";
  auto read = ReadManifest(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->step, 5);
  EXPECT_EQ(read->run_started_unix, 0);
  EXPECT_EQ(read->lr_lowerings, 0);
  EXPECT_EQ(read->format_version, 1);
}

TEST(CheckpointManifestTest, MissingIsNotFound) {
  EXPECT_EQ(ReadManifest(Folder("manifest-missing")).status().code(), Code::kNotFound);
}

TEST(CheckpointManifestTest, EditedManifestFailsItsChecksum) {
  const std::string dir = Folder("manifest-edited");
  ASSERT_TRUE(WriteManifest(dir, Sample()).ok());
  std::fstream f(dir + "/manifest", std::ios::in | std::ios::out);
  f.seekp(std::string("pstrain-checkpoint 1\nstep 1").size());
  f.put('9');  // step 1200 -> 1900
  f.close();
  auto read = ReadManifest(dir);
  EXPECT_EQ(read.status().code(), Code::kDataLoss);
  EXPECT_NE(read.status().message().find("checksum"), std::string::npos);
}

TEST(CheckpointManifestTest, TruncatedManifestIsDataLoss) {
  const std::string dir = Folder("manifest-truncated");
  ASSERT_TRUE(WriteManifest(dir, Sample()).ok());
  std::filesystem::resize_file(dir + "/manifest", 30);
  EXPECT_EQ(ReadManifest(dir).status().code(), Code::kDataLoss);
}

}  // namespace
}  // namespace pst

#include "data/file_glob.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace pst {
namespace {

namespace fs = std::filesystem;

class FileGlobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("file_glob_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "part-folder");
    for (const char* name : {"part-2", "part-10", "part-1", ".part-3", "other"}) {
      std::ofstream(dir_ / name) << "1\n";
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(FileGlobTest, MatchesRegularFilesInNameOrder) {
  StatusOr<std::vector<std::string>> files = MatchingFiles((dir_ / "part-*").string());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::string d = dir_.string() + "/";
  // No folder, no hidden file (a file being written under a dot name).
  EXPECT_EQ(*files, (std::vector<std::string>{d + "part-1", d + "part-10", d + "part-2"}));
}

TEST_F(FileGlobTest, NothingMatchingIsAnEmptyList) {
  StatusOr<std::vector<std::string>> files = MatchingFiles((dir_ / "none-*").string());
  ASSERT_TRUE(files.ok());
  EXPECT_TRUE(files->empty());
  EXPECT_TRUE(MatchingFiles((dir_ / "missing-folder" / "*").string())->empty());
}

TEST_F(FileGlobTest, RefusesAnEmptyPattern) {
  EXPECT_EQ(MatchingFiles("").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pst

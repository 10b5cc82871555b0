#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace pst {
namespace {

namespace fs = std::filesystem;

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("atomic_file_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "file").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
};

TEST_F(AtomicFileTest, WritesAndReplacesTheWholeFileLeavingNoTemporary) {
  ASSERT_TRUE(WriteFileAtomically(path_, "a longer first version").ok());
  ASSERT_TRUE(WriteFileAtomically(path_, "second").ok());
  EXPECT_EQ(Contents(path_), "second");
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

// A write that fails part-way (here the file size limit, as a full disk
// would) keeps the old contents whole and removes the temporary file.
TEST_F(AtomicFileTest, AFailedWriteKeepsTheOldFileAndRemovesTheTemporary) {
  ASSERT_TRUE(WriteFileAtomically(path_, "old").ok());
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() fails with EFBIG instead
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status written = WriteFileAtomically(path_, std::string(1 << 20, 'x'));
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.ToString().find(path_ + ".tmp"), std::string::npos) << written.ToString();
  EXPECT_EQ(Contents(path_), "old");
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(AtomicFileTest, AMissingFolderIsAnErrorNamingTheFile) {
  const std::string path = (dir_ / "no-such-folder" / "file").string();
  const Status written = WriteFileAtomically(path, "x");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.ToString().find(path), std::string::npos) << written.ToString();
}

}  // namespace
}  // namespace pst

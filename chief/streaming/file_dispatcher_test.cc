#include "chief/streaming/file_dispatcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace pst {
namespace {

namespace fs = std::filesystem;

class FileDispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("dispatcher_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name) {
    std::ofstream(dir_ / name) << "1 1:1\n";
    return (dir_ / name).string();
  }
  std::string Pattern() const { return (dir_ / "part-*").string(); }

  fs::path dir_;
  FakeClock clock_;
};

TEST_F(FileDispatcherTest, HandsOutFilesAsTheyAppearListingAtMostEveryInterval) {
  FileDispatcher files(Pattern(), clock_);
  const std::vector<bool> none_gone(2, false);
  EXPECT_EQ(files.Next(0, std::nullopt, none_gone), "");
  const std::string first = Write("part-1");
  // Listed a moment ago: the new file waits for the next listing.
  EXPECT_EQ(files.Next(0, std::nullopt, none_gone), "");
  clock_.Advance(FileDispatcher::kListInterval);
  EXPECT_EQ(files.Next(0, std::nullopt, none_gone), first);
  EXPECT_EQ(files.counts().found, 1u);
}

TEST_F(FileDispatcherTest, KeepsEachFinishedFileOnceForTheReporter) {
  const std::string a = Write("part-a");
  const std::string b = Write("part-b");
  FileDispatcher files(Pattern(), clock_);
  const std::vector<bool> none_gone(2, false);
  ASSERT_EQ(files.Next(0, std::nullopt, none_gone), a);
  StreamedFile done;
  done.path = a;
  done.examples = 7;
  EXPECT_EQ(files.Next(0, done, none_gone), b);
  // The same report again (the worker repeated its request): counted once.
  EXPECT_EQ(files.Next(0, done, none_gone), b);
  const std::vector<StreamedFile> finished = files.TakeFinished();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].path, a);
  EXPECT_EQ(finished[0].worker, 0);
  EXPECT_EQ(finished[0].examples, 7);
  EXPECT_TRUE(files.TakeFinished().empty());
}

TEST_F(FileDispatcherTest, AGoneWorkersFileGoesToTheNextWorkerThatAsks) {
  const std::string a = Write("part-a");
  FileDispatcher files(Pattern(), clock_);
  ASSERT_EQ(files.Next(0, std::nullopt, {false, false}), a);
  EXPECT_EQ(files.Next(1, std::nullopt, {false, false}), "");
  EXPECT_EQ(files.Next(1, std::nullopt, {true, false}), a);  // worker 0 died
}

}  // namespace
}  // namespace pst

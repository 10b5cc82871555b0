#include "chief/reporting/progress_line.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "common/clock.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const MonotonicClock::TimePoint kStart{};

// What a ProgressLine wrote, read back from a memory stream.
class Output {
 public:
  Output() : file_(open_memstream(&data_, &size_)) {}
  ~Output() {
    std::fclose(file_);
    std::free(data_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

TEST(ProgressLineTest, FileGetsOneLineEveryInterval) {
  Output out;
  ProgressLine line(out.file(), /*in_place=*/false, seconds(5));
  EXPECT_TRUE(line.Due(kStart));
  line.Show(kStart, "a");
  EXPECT_FALSE(line.Due(kStart + milliseconds(4999)));
  EXPECT_TRUE(line.Due(kStart + seconds(5)));
  line.Show(kStart + seconds(6), "b");
  EXPECT_FALSE(line.Due(kStart + seconds(10)));  // counted from the last line shown
  EXPECT_TRUE(line.Due(kStart + seconds(11)));
  line.Clear();  // nothing to erase in a file
  line.End();
  EXPECT_EQ(out.text(), "Progress: a\nProgress: b\n");
}

TEST(ProgressLineTest, TerminalRedrawsOneLineInPlace) {
  Output out;
  ProgressLine line(out.file(), /*in_place=*/true, seconds(5));
  line.Show(kStart, "long text");
  // Redrawn a few times a second, whatever the interval for files.
  EXPECT_FALSE(line.Due(kStart + ProgressLine::kRedrawInterval - milliseconds(1)));
  EXPECT_TRUE(line.Due(kStart + ProgressLine::kRedrawInterval));
  line.Show(kStart + seconds(1), "short");
  line.End();
  EXPECT_EQ(out.text(), "\rProgress: long text\x1b[K\rProgress: short\x1b[K\n");
}

TEST(ProgressLineTest, ClearErasesTheDrawnLineBeforeOtherOutput) {
  Output out;
  ProgressLine line(out.file(), /*in_place=*/true, seconds(5));
  line.Clear();  // nothing drawn yet
  line.Show(kStart, "x");
  line.Clear();
  std::fputs("Step: 50\n", out.file());
  line.End();  // erased: no newline owed
  EXPECT_EQ(out.text(), "\rProgress: x\x1b[K\r\x1b[KStep: 50\n");
}

}  // namespace
}  // namespace pst

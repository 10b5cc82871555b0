#include "data/example_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pst {
namespace {

// A reader's line code stand-in: one example per non-empty line, its label
// the line's length; "bad" is refused naming its line.
Status AppendLength(int64_t line_number, std::string_view line, Dataset* d) {
  if (line == "bad") return InvalidArgument("line " + std::to_string(line_number) + ": bad");
  if (line.empty()) return Status::OK();
  d->labels.push_back(static_cast<int32_t>(line.size()));
  d->sparse_offsets.push_back(0);
  ++d->size;
  return Status::OK();
}

TEST(ExampleLinesTest, EachLineGivesOneExampleInOrder) {
  Dataset d;
  d.sparse_offsets = {0};
  ASSERT_TRUE(AppendExampleLines({"a", "abc\r", "ab"}, AppendLength, &d).ok());
  EXPECT_EQ(d.size, 3);
  EXPECT_EQ(d.labels, (std::vector<int32_t>{1, 3, 2}));  // the "\r" removed, as a file's
}

TEST(ExampleLinesTest, RefusesWhatWouldNotGiveOneExampleALine) {
  Dataset d;
  EXPECT_EQ(AppendExampleLines({}, AppendLength, &d).code(), Code::kInvalidArgument);
  EXPECT_EQ(AppendExampleLines({"a", "", "b"}, AppendLength, &d).message(),
            "line 2: holds no example (it is empty or only a comment)");
  EXPECT_EQ(AppendExampleLines({"a\nb"}, AppendLength, &d).message(),
            "line 1: holds a newline: give one example a line");
  EXPECT_EQ(AppendExampleLines({"a", "b", "bad"}, AppendLength, &d).message(), "line 3: bad");
}

}  // namespace
}  // namespace pst

#include "scheduler/progressive_window.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(ProgressiveWindowTest, WeighsEachFileByItsLines) {
  ProgressiveWindow w(3);
  EXPECT_EQ(w.Mean().examples, 0);
  w.Add({100, 0.7, 0.5});
  w.Add({300, 0.8, 0.4});
  const FileScore m = w.Mean();
  EXPECT_EQ(m.examples, 400);
  EXPECT_DOUBLE_EQ(m.auc, (70.0 + 240.0) / 400.0);
  EXPECT_DOUBLE_EQ(m.log_loss, (50.0 + 120.0) / 400.0);
}

TEST(ProgressiveWindowTest, KeepsOnlyTheNewestFiles) {
  ProgressiveWindow w(2);
  w.Add({100, 0.5, 0.9});
  w.Add({100, 0.7, 0.5});
  w.Add({100, 0.9, 0.3});
  EXPECT_DOUBLE_EQ(w.Mean().auc, 0.8);
  EXPECT_EQ(w.files_seen(), 3);
  w.Add({0, 0.1, 9.0});  // an empty file says nothing
  EXPECT_DOUBLE_EQ(w.Mean().auc, 0.8);
  EXPECT_EQ(w.files_seen(), 3);
}

}  // namespace
}  // namespace pst

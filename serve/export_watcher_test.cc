#include "serve/export_watcher.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "serve/testing/click_models.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

class ExportWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("serve_watcher_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "exports");
    WriteLines((dir_ / "train.txt").string(), CriteoLines(40));
    job_ = ClickJob((dir_ / "train.txt").string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Exports() const { return (dir_ / "exports").string(); }
  // The first element of the served model's tensor `i`.
  static float First(const ServedModel& model, size_t i) {
    return model.trained.params[i].f32()[0];
  }

  fs::path dir_;
  Job job_;
};

TEST_F(ExportWatcherTest, FollowsBasesAndDeltasAndKeepsServingPastABadOne) {
  ModelHolder holder("none");
  ExportWatcher watcher(Exports(), &holder);
  std::string why;
  watcher.Poll();
  EXPECT_EQ(holder.Get(&why), nullptr);
  EXPECT_EQ(why, "no export in " + Exports() + " yet");

  WriteExportBase(Exports(), 100, job_, 0.1f);
  watcher.Poll();
  const std::shared_ptr<const ServedModel> base = holder.Get();
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->step, 100);
  EXPECT_EQ(base->base_step, 100);
  EXPECT_EQ(base->source, Exports() + "/" + BaseFileName(100));
  struct stat info;
  ASSERT_EQ(::stat(base->source.c_str(), &info), 0);
  EXPECT_EQ(std::chrono::system_clock::to_time_t(base->written_at), info.st_mtime);
  const size_t table = base->trained.params.size() - 1;  // the last table
  EXPECT_FLOAT_EQ(First(*base, 0), ClickParamValue(0.1f, 0));
  watcher.Poll();  // nothing new: nothing published
  EXPECT_EQ(holder.loads(), 1);

  WriteExportDelta(Exports(), 150, 100, 100, job_, 0.2f);
  watcher.Poll();
  const std::shared_ptr<const ServedModel> delta = holder.Get();
  EXPECT_EQ(delta->step, 150);
  EXPECT_EQ(delta->base_step, 100);
  EXPECT_FLOAT_EQ(First(*delta, 0), ClickParamValue(0.2f, 0));      // the dense variables replaced
  EXPECT_FLOAT_EQ(First(*delta, table), ClickParamValue(0.2f, 0));  // row 0 overwritten
  EXPECT_FLOAT_EQ(delta->trained.params[table].f32()[delta->trained.params[table].shape()[1]],
                  base->trained.params[table].f32()[base->trained.params[table].shape()[1]]);
  // The model handed out before is whole and unchanged.
  EXPECT_FLOAT_EQ(First(*base, 0), ClickParamValue(0.1f, 0));
  EXPECT_FLOAT_EQ(First(*base, table), ClickParamValue(0.1f, 0));

  // A corrupt delta: logged, and the model before keeps serving.
  std::ofstream(Exports() + "/" + DeltaFileName(200)) << "not a tensor file";
  watcher.Poll();
  EXPECT_EQ(holder.Get()->step, 150);
  EXPECT_EQ(holder.loads(), 2);

  // A newer base is taken whole, the corrupt delta of the old one aside.
  WriteExportBase(Exports(), 300, job_, 0.3f);
  watcher.Poll();
  EXPECT_EQ(holder.Get()->step, 300);
  EXPECT_EQ(holder.Get()->base_step, 300);
  EXPECT_FLOAT_EQ(First(*holder.Get(), table), ClickParamValue(0.3f, 0));

  // A delta whose previous export is missing is not applied.
  WriteExportDelta(Exports(), 400, 300, 350, job_, 0.4f);
  watcher.Poll();
  EXPECT_EQ(holder.Get()->step, 300);
  WriteExportDelta(Exports(), 350, 300, 300, job_, 0.35f);
  watcher.Poll();
  EXPECT_EQ(holder.Get()->step, 400);
  EXPECT_EQ(holder.loads(), 4);
}

TEST_F(ExportWatcherTest, ACorruptFirstBaseIsThe503sReason) {
  ModelHolder holder("none");
  ExportWatcher watcher(Exports(), &holder);
  std::ofstream(Exports() + "/" + BaseFileName(100)) << "not a model";
  watcher.Poll();
  std::string why;
  EXPECT_EQ(holder.Get(&why), nullptr);
  EXPECT_NE(why.find(BaseFileName(100)), std::string::npos) << why;
}

}  // namespace
}  // namespace pst

#include "worker/stream_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace pst {
namespace {

Dataset Examples(int n) {
  Dataset d;
  d.size = n;
  d.num_classes = 2;
  d.num_fields = 1;
  d.sparse_offsets.push_back(0);
  for (int i = 0; i < n; ++i) {
    d.labels.push_back(i % 2);
    d.sparse_keys.push_back(i);
    d.sparse_fields.push_back(0);
    d.sparse_values.push_back(1.0f);
    d.sparse_offsets.push_back(i + 1);
  }
  return d;
}

TEST(StreamFileTest, CutsNumberedBatchesTheLastOneShort) {
  StreamFile file("logs/part-1", Examples(25), 10);
  EXPECT_EQ(file.batches(), 3);
  const StreamBatch first = file.Mark(1);
  EXPECT_EQ(first.stream, StreamIdOf("logs/part-1"));
  EXPECT_EQ(first.batch, 1);
  EXPECT_EQ(first.batch_size, 10);
  EXPECT_EQ(first.examples, 10);
  EXPECT_FALSE(first.last);
  const StreamBatch last = file.Mark(3);
  EXPECT_EQ(last.examples, 5);
  EXPECT_TRUE(last.last);
  Batch batch;
  file.Fill(3, &batch);
  ASSERT_EQ(batch.size, 5);
  EXPECT_EQ(batch.sparse_keys.front(), 20);  // lines 21..25
}

TEST(StreamFileTest, ScoresTheLinesItTrained) {
  StreamFile file("f", Examples(4), 2);
  // Labels 0,1,0,1; a model that ranks every positive above every negative.
  file.Score(1, {0.2f, 0.9f});
  file.Score(2, {0.1f, 0.8f});
  const FileResult r = file.Result();
  EXPECT_EQ(r.path, "f");
  EXPECT_EQ(r.examples, 4);
  EXPECT_EQ(r.positives, 2);
  EXPECT_DOUBLE_EQ(r.auc, 1.0);
  EXPECT_NEAR(r.log_loss, -(std::log(0.8) + std::log(0.9) + std::log(0.9) + std::log(0.8)) / 4,
              1e-6);
}

TEST(StreamFileTest, AResumedFileScoresOnlyWhatItTrained) {
  StreamFile file("f", Examples(6), 2);
  file.Score(3, {0.3f, 0.6f});  // batches 1 and 2 were trained before a restart
  EXPECT_EQ(file.Result().examples, 2);
}

TEST(StreamFileTest, ReadNamesAMissingFile) {
  DataOptions data;
  data.format = "libsvm";
  StatusOr<StreamFile> file = StreamFile::Read(data, 1, "/nonexistent/part-9", 10);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("/nonexistent/part-9"), std::string::npos)
      << file.status().message();
}

TEST(StreamFileTest, ReadsALibsvmFile) {
  const std::string path = ::testing::TempDir() + "/stream_file_test.svm";
  std::ofstream(path) << "1 3:1 7:1\n0 2:1\n1 5:1\n";
  DataOptions data;
  data.format = "libsvm";
  StatusOr<StreamFile> file = StreamFile::Read(data, 1, path, 2);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->examples(), 3);
  EXPECT_EQ(file->batches(), 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace pst

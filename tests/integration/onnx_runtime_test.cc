// The trained model as ONNX, served by ONNX Runtime: for mlp (CSV,
// standardized in the graph), mlp_relu (MNIST's format), cnn and spec
// models, one with batch norms (records of 8x8x3 images), click models (one
// dim, and fields of several dims from a feature file), the chief's
// --export_onnx file gives, on
// the test split read by Python, the class probabilities `predict --output`
// gives, within 1e-5 (tests/integration/onnx_predictions.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/local_cluster.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/synthetic_datasets.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::seconds;

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class OnnxRuntimeTest : public SyntheticDataTest {
 protected:
  void SetUp() override {
    std::string why_not;
    python_ = TestPython("onnx,onnxruntime,numpy", &why_not);
    if (python_.empty()) GTEST_SKIP() << why_not;
    ASSERT_NE(std::getenv("PST_SOURCE_DIR"), nullptr) << "run through ctest";
    dir_ = TestDir();
  }

  // Trains with `data` and `training` flags on 1 ps and 1 worker, the chief
  // exporting dir_/model.onnx (or, with `exporter` kPredict, predict from
  // the chief's model.bin); predicts the test split into
  // dir_/predictions.csv; returns what onnx_predictions.py says comparing
  // the two on `python_data` (its FORMAT ARGS), failing the test if they
  // differ.
  void ExpectSpecModelOnRecordsMatchesPredict();

  enum class Exporter { kChief, kPredict };
  std::string TrainAndCompare(const std::vector<std::string>& data,
                              const std::vector<std::string>& training,
                              const std::vector<std::string>& python_data,
                              Exporter exporter = Exporter::kChief) {
    LocalCluster cluster(1, 1, dir_);
    const std::string onnx = "--export_onnx=" + dir_ + "/model.onnx";
    std::vector<std::string> flags = data;
    flags.insert(flags.end(), training.begin(), training.end());
    flags.insert(flags.end(), {"--run_dir=" + dir_, "--eval_every_steps=0", "--batch_size=50"});
    if (exporter == Exporter::kChief) flags.push_back(onnx);
    cluster.StartAll(flags);
    const auto exits = cluster.WaitAll(seconds(300));
    for (const TaskExit& e : exits) {
      EXPECT_EQ(e.code, 0) << DescribeExits(exits) << cluster.task("chief").Log();
    }
    EXPECT_NE(cluster.task("chief").Log().find("Test-Accuracy: "), std::string::npos);

    std::vector<std::string> predict = {BinDir() + "/predict",
                                        "--model_file=" + dir_ + "/model.bin",
                                        "--output=" + dir_ + "/predictions.csv"};
    predict.insert(predict.end(), data.begin(), data.end());
    if (exporter == Exporter::kPredict) predict.push_back(onnx);
    Run(predict, "predict");

    std::vector<std::string> compare = {
        python_,
        std::string(std::getenv("PST_SOURCE_DIR")) + "/tests/integration/onnx_predictions.py",
        dir_ + "/model.onnx", dir_ + "/predictions.csv"};
    compare.insert(compare.end(), python_data.begin(), python_data.end());
    const std::string said = Run(compare, "onnx_predictions");
    std::cout << "onnx_predictions.py: " << said;
    return said;
  }

  // Runs argv to its end (exit 0 expected); returns its output.
  std::string Run(const std::vector<std::string>& argv, const std::string& name) {
    auto process = ChildProcess::Start(argv, dir_ + "/" + name + ".log");
    EXPECT_TRUE(process.ok());
    if (!process.ok()) return "";
    EXPECT_EQ((*process)->Wait(seconds(120)), 0) << (*process)->Log();
    return (*process)->Log();
  }

  std::string python_, dir_;
};

TEST_F(OnnxRuntimeTest, MlpOnStandardizedCsvMatchesPredict) {
  std::mt19937 rng(5);
  const auto centres = Centres(3, 12, rng);
  WriteCsv(dir_ + "/train.csv", 600, centres, rng);
  WriteCsv(dir_ + "/test.csv", 200, centres, rng);
  const std::string out =
      TrainAndCompare({"--dataset=csv", "--train_file=" + dir_ + "/train.csv",
                       "--test_file=" + dir_ + "/test.csv", "--label_column=-1", "--normalize"},
                      {"--model=mlp", "--train_steps=150"}, {"csv", dir_ + "/test.csv"});
  EXPECT_NE(out.find("examples 200 "), std::string::npos) << out;
}

TEST_F(OnnxRuntimeTest, MlpReluOnMnistFormatMatchesPredictAndPredictExportsTheSameFile) {
  const std::string out = TrainAndCompare(
      {"--data_dir=" + data_dir()}, {"--model=mlp_relu", "--train_steps=150"}, {"idx", data_dir()});
  EXPECT_NE(out.find("examples 500 "), std::string::npos) << out;

  // predict --export_onnx, without a data set, only exports: the same bytes.
  const std::string again = dir_ + "/again.onnx";
  const std::string said =
      Run({BinDir() + "/predict", "--model_file=" + dir_ + "/model.bin", "--export_onnx=" + again},
          "predict-export");
  EXPECT_NE(said.find("ONNX model: " + again), std::string::npos) << said;
  EXPECT_EQ(said.find("Test-Accuracy"), std::string::npos) << said;
  EXPECT_TRUE(Contents(again) == Contents(dir_ + "/model.onnx")) << "the two exports differ";
}

TEST_F(OnnxRuntimeTest, CnnOnRecordsMatchesPredict) {
  std::mt19937 rng(6);
  WriteRecords(dir_ + "/train.bin", 600, rng);
  WriteRecords(dir_ + "/test.bin", 100, rng);
  const std::string out = TrainAndCompare(
      {"--dataset=records", "--train_file=" + dir_ + "/train.bin",
       "--test_file=" + dir_ + "/test.bin", "--input_shape=8,8,3"},
      {"--model=cnn", "--train_steps=60"}, {"records", dir_ + "/test.bin", "8", "8", "3"});
  EXPECT_NE(out.find("examples 100 "), std::string::npos) << out;
}

// Trains dir_/model.spec on the 8x8x3 records in dir_ for 60 steps and
// expects ONNX Runtime to agree with predict on the 100 test records.
void OnnxRuntimeTest::ExpectSpecModelOnRecordsMatchesPredict() {
  const std::string out =
      TrainAndCompare({"--dataset=records", "--train_file=" + dir_ + "/train.bin",
                       "--test_file=" + dir_ + "/test.bin", "--input_shape=8,8,3"},
                      {"--model_spec=" + dir_ + "/model.spec", "--train_steps=60"},
                      {"records", dir_ + "/test.bin", "8", "8", "3"});
  EXPECT_NE(out.find("examples 100 "), std::string::npos) << out;
}

TEST_F(OnnxRuntimeTest, SpecModelOnRecordsMatchesPredict) {
  std::mt19937 rng(7);
  WriteRecords(dir_ + "/train.bin", 600, rng);
  WriteRecords(dir_ + "/test.bin", 100, rng);
  std::ofstream(dir_ + "/model.spec") << "conv 3x3 8 same relu\n"
                                         "maxpool 2\n"
                                         "conv 3x3 12 stride 2 same sigmoid\n"
                                         "dense 24 relu\n"
                                         "dropout 0.3\n"
                                         "dense classes\n"
                                         "learning_rate 0.1\n";
  ExpectSpecModelOnRecordsMatchesPredict();
}

// Batch norms after a convolution (BatchNormalization on NCHW images) and
// after a dense layer (on [batch, 16] rows), normalizing at inference with
// the moving statistics the training moved (momentum 0.9 moves them well
// away from their initial 0 and 1 in 60 steps).
TEST_F(OnnxRuntimeTest, SpecModelWithBatchNormsOnRecordsMatchesPredict) {
  std::mt19937 rng(8);
  WriteRecords(dir_ + "/train.bin", 600, rng);
  WriteRecords(dir_ + "/test.bin", 100, rng);
  std::ofstream(dir_ + "/model.spec") << "conv 3x3 8 same\n"
                                         "batchnorm momentum 0.9 relu\n"
                                         "maxpool 2\n"
                                         "dense 16\n"
                                         "batchnorm momentum 0.9 sigmoid\n"
                                         "dense classes\n"
                                         "learning_rate 0.1\n";
  ExpectSpecModelOnRecordsMatchesPredict();
}

// Every click model's parts (FM's term, full and low-rank cross layers,
// stacked and parallel, DLRM's dot interaction and bottom layers, batch
// norm in an MLP) on a small generated click log: ONNX Runtime gives
// predict's probabilities.
TEST_F(OnnxRuntimeTest, ClickModelsOnCriteoMatchPredict) {
  const std::string data = dir_ + "/ctr";
  Run({"/usr/bin/env", "python3",
       std::string(std::getenv("PST_SOURCE_DIR")) + "/examples/make_ctr_problem.py", data,
       "--train_examples=3000", "--test_examples=500", "--lr_epochs=0"},
      "make_ctr_problem");
  std::ofstream(dir_ + "/parallel.spec") << "embedding 8 combiner=mean\n"
                                            "wide\n"
                                            "cross 2 rank=4 parallel\n"
                                            "dense 16 relu\n"
                                            "batchnorm\n"
                                            "dense classes\n";
  const std::vector<std::string> models = {"--model=deepfm", "--model=dcn_v2", "--model=dlrm",
                                           "--model_spec=" + dir_ + "/parallel.spec"};
  for (const std::string& model : models) {
    SCOPED_TRACE(model);
    const std::string said =
        TrainAndCompare({"--dataset=criteo", "--train_file=" + data + "/train.txt",
                         "--test_file=" + data + "/test.txt"},
                        {model, "--embedding_rows=5000", "--train_steps=60", "--optimizer=adam",
                         "--learning_rate=0.003"},
                        {"criteo", data + "/test.txt"});
    EXPECT_NE(said.find("examples 500 "), std::string::npos) << said;
  }
}

// Fields of three dims (--features), exported by predict from model.bin:
// wide_deep's MLP and dcn_v2's cross layers read the field vectors side by
// side in field order, each from its dim's table (deep/embedding for dim 8,
// the first field's; then deep/embedding_dim16 and deep/embedding_dim4),
// from its table's key range on: tables t1 and t4 (dim 8), t3 and t0 (dim
// 4) share a physical table, so some fields' ranges start after another's,
// and each table's columns are spread over the fields. The Python checker
// computes the keys the feature file makes (onnx_predictions.py); a field
// read from a wrong row (a wrong base, table or order) gives other
// probabilities.
TEST_F(OnnxRuntimeTest, ClickModelsWithFieldsOfSeveralDimsMatchPredict) {
  const std::string data = dir_ + "/ctr";
  Run({"/usr/bin/env", "python3",
       std::string(std::getenv("PST_SOURCE_DIR")) + "/examples/make_ctr_problem.py", data,
       "--train_examples=3000", "--test_examples=500", "--lr_epochs=0"},
      "make_ctr_problem");
  const std::string features = dir_ + "/dims.features";
  {
    std::ofstream out(features);
    out << "I3 numeric I3\nI1 numeric I1 log1p\nI7 numeric I7\n";
    const int dims[5] = {4, 8, 16, 4, 8}, buckets[5] = {200, 300, 400, 500, 600};
    for (int c = 1; c <= 26; ++c) {
      const int t = c % 5;
      out << "C" << c << " categorical C" << c << " table=t" << t << " buckets=" << buckets[t]
          << " dim=" << dims[t] << "\n";
    }
  }
  const std::vector<std::string> models = {"--model=wide_deep", "--model=dcn_v2"};
  for (const std::string& model : models) {
    SCOPED_TRACE(model);
    const std::string said =
        TrainAndCompare({"--dataset=criteo", "--train_file=" + data + "/train.txt",
                         "--test_file=" + data + "/test.txt", "--features=" + features},
                        {model, "--train_steps=60", "--optimizer=adam", "--learning_rate=0.003"},
                        {"criteo-features", data + "/test.txt", features}, Exporter::kPredict);
    EXPECT_NE(said.find("examples 500 "), std::string::npos) << said;
    const std::string graph = Contents(dir_ + "/model.onnx");
    for (const char* table : {"deep/embedding_dim16", "deep/embedding_dim4", "field_bases"}) {
      EXPECT_NE(graph.find(table), std::string::npos) << table << " is not in the graph";
    }
  }
}

}  // namespace
}  // namespace pst

// TowerModel: "cpu,cpu" and "cpu,cpu,cpu" compute what "cpu" does on
// the whole batch; slices, placement, and a tower's device failure.
#include "model/parallel/tower_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/fake_device_kernels.h"
#include "model/model_test_util.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

// The loss and gradients of `devices` against "cpu" on the same batch, within
// relative 1e-5 (the slices' float sums round differently).
void ExpectSameAsOneCpu(const std::string& name, const std::string& devices, int64_t batch_size) {
  SCOPED_TRACE(name + " on " + devices + ", batch " + std::to_string(batch_size));
  auto one = MustMakeModel(name);
  auto towers = MustMakeModel(name, 784, 10, devices);
  const std::vector<Tensor> params = InitialParams(*one, 1);
  std::vector<Tensor> want, got;
  // Twice: the second step reuses the towers' buffers and threads.
  for (uint32_t seed : {2, 3}) {
    const Batch batch = RandomBatch(batch_size, 784, 10, seed);
    const float want_loss = one->ComputeGradients(params, batch, &want).value();
    const StatusOr<float> got_loss = towers->ComputeGradients(params, batch, &got);
    ASSERT_TRUE(got_loss.ok()) << got_loss.status().ToString();
    EXPECT_NEAR(*got_loss, want_loss, 1e-5 * std::abs(want_loss));
    ASSERT_EQ(got.size(), want.size());
    for (size_t v = 0; v < want.size(); ++v) {
      EXPECT_LT(NormwiseRelDiff(got[v], want[v]), 1e-5) << one->variables()[v].name;
    }

    const Model::EvalResult want_eval = one->Evaluate(params, batch).value();
    const StatusOr<Model::EvalResult> got_eval = towers->Evaluate(params, batch);
    ASSERT_TRUE(got_eval.ok()) << got_eval.status().ToString();
    EXPECT_NEAR(got_eval->loss_sum, want_eval.loss_sum, 1e-5 * want_eval.loss_sum);
    EXPECT_EQ(got_eval->correct, want_eval.correct);
    EXPECT_EQ(got_eval->count, batch_size);
  }
}

TEST(TowerModelTest, TwoCpusMatchOne) {
  ExpectSameAsOneCpu("mlp", "cpu,cpu", 32);
  ExpectSameAsOneCpu("cnn", "cpu,cpu", 16);
}

TEST(TowerModelTest, ThreeCpusMatchOneOnABatchNotDivisibleByThree) {
  ExpectSameAsOneCpu("mlp_relu", "cpu,cpu,cpu", 31);
  ExpectSameAsOneCpu("cnn", "cpu,cpu,cpu", 11);
}

TEST(TowerModelTest, ABatchSmallerThanTheReplicasLeavesSomeIdle) {
  ExpectSameAsOneCpu("mlp", "cpu,cpu,cpu", 2);
  ExpectSameAsOneCpu("mlp", "cpu,cpu,cpu", 1);
}

TEST(TowerModelTest, DevicesVariablesAndPlacement) {
  auto one = MustMakeModel("mlp");
  auto model = MustMakeModel("mlp", 784, 10, "cpu,cpu");
  EXPECT_NE(dynamic_cast<TowerModel*>(model.get()), nullptr);
  EXPECT_EQ(model->device(), "cpu,cpu");
  EXPECT_EQ(model->input_dim(), 784);
  EXPECT_EQ(model->num_classes(), 10);
  ExpectSameVariables(*model, *one);
  const std::vector<std::string> lines = model->Placement();
  ASSERT_EQ(lines.size(), 2 * one->Placement().size());
  EXPECT_EQ(lines.front(), "tower 0: dense0 (Dense 784->100) on cpu");
  EXPECT_EQ(lines.back(), "tower 1: softmax_cross_entropy (10 classes) on cpu");
}

TEST(TowerModelTest, RejectsWhatOneModelRejects) {
  auto model = MustMakeModel("mlp", 784, 10, "cpu,cpu");
  const std::vector<Tensor> params = InitialParams(*model, 1);
  std::vector<Tensor> grads;
  Batch bad = RandomBatch(6, 784, 10, 2);
  bad.labels[5] = 10;
  const StatusOr<float> loss = model->ComputeGradients(params, bad, &grads);
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.status().code(), Code::kInvalidArgument);
  // Counted in the whole batch, not in tower 1's slice.
  EXPECT_NE(loss.status().message().find("example 5"), std::string::npos)
      << loss.status().message();
  EXPECT_EQ(model->Evaluate(params, Batch{0, 784, {}, {}}).status().code(), Code::kInvalidArgument);
  std::vector<Tensor> too_few(params.begin(), params.end() - 1);
  EXPECT_EQ(model->Evaluate(too_few, RandomBatch(4, 784, 10, 3)).status().code(),
            Code::kInvalidArgument);
}

TEST(TowerModelTest, DeviceListErrors) {
  EXPECT_EQ(MakeModel("mlp", 784, 10, "cpu,").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MakeModel("mlp", 784, 10, ",cpu").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MakeModel("mlp", 784, 10, "cpu,abacus").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(MakeModel("resnet", 784, 10, "cpu,cpu").status().code(), Code::kInvalidArgument);
}

// Two fake devices: each tower keeps to its own device's memory and
// buffers, and one device's failure fails the step, naming the tower.
TEST(TowerModelTest, OnFakeDevices) {
  std::vector<std::unique_ptr<Kernels>> kernels;
  std::vector<FakeDeviceKernels*> devices;
  for (const char* name : {"fake:0", "fake:1"}) {
    auto device = std::make_unique<FakeDeviceKernels>(name);
    devices.push_back(device.get());
    kernels.push_back(std::move(device));
  }
  auto model = MakeModelOnKernels("cnn", 784, 10, std::move(kernels)).value();
  EXPECT_EQ(model->device(), "fake:0,fake:1");
  auto cpu = MustMakeModel("cnn");
  const std::vector<Tensor> params = InitialParams(*model, 1);
  const Batch batch = RandomBatch(9, 784, 10, 2);
  std::vector<Tensor> grads, want;
  const float want_loss = cpu->ComputeGradients(params, batch, &want).value();
  const StatusOr<float> loss = model->ComputeGradients(params, batch, &grads);
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  EXPECT_NEAR(*loss, want_loss, 1e-5 * want_loss);
  for (size_t v = 0; v < want.size(); ++v) {
    EXPECT_LT(NormwiseRelDiff(grads[v], want[v]), 1e-5);
  }

  const int64_t allocations[] = {devices[0]->allocations(), devices[1]->allocations()};
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  EXPECT_EQ(devices[0]->allocations(), allocations[0]);
  EXPECT_EQ(devices[1]->allocations(), allocations[1]);

  devices[1]->InjectError(Internal("CUDA error: out of memory"));
  const StatusOr<float> failed = model->ComputeGradients(params, batch, &grads);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Code::kInternal);
  EXPECT_EQ(failed.status().message(), "tower 1: CUDA error: out of memory");
  EXPECT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
}

// Class probabilities: rows sum to 1, their argmax agrees with Evaluate's
// count of correct examples, and two towers give what one gives.
TEST(TowerModelTest, PredictMatchesEvaluateAndASingleReplica) {
  auto one = MustMakeModel("mlp_relu");
  auto two = MustMakeModel("mlp_relu", 784, 10, "cpu,cpu");
  const std::vector<Tensor> params = InitialParams(*one, 3);
  const Batch batch = RandomBatch(37, 784, 10, 4);
  std::vector<float> p1, p2;
  ASSERT_TRUE(one->Predict(params, batch, &p1).ok());
  ASSERT_TRUE(two->Predict(params, batch, &p2).ok());
  ASSERT_EQ(p1.size(), 37u * 10);
  ASSERT_EQ(p2.size(), p1.size());
  int64_t correct = 0;
  for (int64_t r = 0; r < 37; ++r) {
    double sum = 0;
    for (int c = 0; c < 10; ++c) {
      sum += p1[r * 10 + c];
      EXPECT_NEAR(p2[r * 10 + c], p1[r * 10 + c], 1e-6);
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
    const auto row = p1.begin() + r * 10;
    correct += std::max_element(row, row + 10) - row == batch.labels[r];
  }
  EXPECT_EQ(correct, one->Evaluate(params, batch)->correct);
  Batch unlabelled = batch;
  unlabelled.labels.clear();
  std::vector<float> p3;
  ASSERT_TRUE(two->Predict(params, unlabelled, &p3).ok());
  EXPECT_EQ(p3, p2);
}

}  // namespace
}  // namespace pst

// PipelinedModel: 2 and 3 stages, with 1 and several micro-batches, compute
// what the unsplit model does on the whole batch; placement, errors, and
// stages on (fake) devices whose memory is not the host's.
#include "model/parallel/pipelined_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/fake_device_kernels.h"
#include "model/model_test_util.h"
#include "model/parallel/make_pipelined_model.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

std::unique_ptr<Model> MustMakePipelined(const std::string& name, int stages, int micro_batches,
                                         const std::string& device = "cpu") {
  StatusOr<std::unique_ptr<Model>> model =
      MakePipelinedModel(name, 784, 10, device, PipelineOptions{stages, micro_batches});
  CHECK(model.ok()) << model.status().ToString();
  return std::move(*model);
}

// The loss, gradients, evaluation and predictions of `pipelined` against
// the unsplit model on the same batches and parameters, within relative
// 1e-5 (micro-batch sums round differently).
void ExpectSameAsUnsplit(const std::string& name, Model& pipelined, int64_t batch_size) {
  auto one = MustMakeModel(name);
  const std::vector<Tensor> params = InitialParams(*one, 1);
  std::vector<Tensor> want, got;
  // Twice, then a smaller batch: later steps reuse the buffers.
  for (const auto& [seed, size] :
       {std::pair{2, batch_size}, {3, batch_size}, {4, batch_size / 2}}) {
    SCOPED_TRACE("batch " + std::to_string(size) + ", seed " + std::to_string(seed));
    const Batch batch = RandomBatch(size, 784, 10, seed);
    const float want_loss = one->ComputeGradients(params, batch, &want).value();
    const StatusOr<float> got_loss = pipelined.ComputeGradients(params, batch, &got);
    ASSERT_TRUE(got_loss.ok()) << got_loss.status().ToString();
    EXPECT_NEAR(*got_loss, want_loss, 1e-5 * std::abs(want_loss));
    ASSERT_EQ(got.size(), want.size());
    for (size_t v = 0; v < want.size(); ++v) {
      EXPECT_LT(NormwiseRelDiff(got[v], want[v]), 1e-5) << one->variables()[v].name;
    }

    const Model::EvalResult want_eval = one->Evaluate(params, batch).value();
    const StatusOr<Model::EvalResult> got_eval = pipelined.Evaluate(params, batch);
    ASSERT_TRUE(got_eval.ok()) << got_eval.status().ToString();
    EXPECT_NEAR(got_eval->loss_sum, want_eval.loss_sum, 1e-5 * want_eval.loss_sum);
    EXPECT_EQ(got_eval->correct, want_eval.correct);
    EXPECT_EQ(got_eval->count, size);

    std::vector<float> want_probs, got_probs;
    ASSERT_TRUE(one->Predict(params, batch, &want_probs).ok());
    ASSERT_TRUE(pipelined.Predict(params, batch, &got_probs).ok());
    ASSERT_EQ(got_probs.size(), want_probs.size());
    for (size_t i = 0; i < want_probs.size(); ++i) {
      EXPECT_NEAR(got_probs[i], want_probs[i], 1e-5) << i;
    }
  }
}

void ExpectSameAsUnsplit(const std::string& name, int stages, int micro_batches,
                         int64_t batch_size) {
  SCOPED_TRACE(name + ": " + std::to_string(stages) + " stages, " + std::to_string(micro_batches) +
               " micro-batches");
  auto pipelined = MustMakePipelined(name, stages, micro_batches);
  ExpectSameAsUnsplit(name, *pipelined, batch_size);
}

TEST(PipelinedModelTest, TwoStagesMatchTheUnsplitModel) {
  for (const char* name : {"mlp", "mlp_relu", "cnn"}) {
    ExpectSameAsUnsplit(name, 2, 1, 16);
    ExpectSameAsUnsplit(name, 2, 4, 16);
  }
}

TEST(PipelinedModelTest, ThreeStagesMatchTheUnsplitModelOnUnevenMicroBatches) {
  for (const char* name : {"mlp", "mlp_relu", "cnn"}) {
    ExpectSameAsUnsplit(name, 3, 1, 14);
    ExpectSameAsUnsplit(name, 3, 3, 14);  // micro-batches of 5, 5, 4 (then 3, 2, 2)
  }
}

TEST(PipelinedModelTest, MoreMicroBatchesThanExamples) {
  ExpectSameAsUnsplit("mlp_relu", 2, 8, 4);  // 4 micro-batches of 1, then 2 of 1
}

TEST(PipelinedModelTest, OneStageWithMicroBatchesIsGradientAccumulation) {
  ExpectSameAsUnsplit("cnn", 1, 3, 10);
}

TEST(PipelinedModelTest, DevicesVariablesAndPlacement) {
  auto one = MustMakeModel("cnn");
  auto model = MustMakePipelined("cnn", 2, 4);
  EXPECT_EQ(model->device(), "cpu,cpu");
  EXPECT_EQ(model->input_dim(), 784);
  EXPECT_EQ(model->num_classes(), 10);
  ExpectSameVariables(*model, *one);
  // Cut by multiply-adds: conv0 to conv1 (1.91M of the 2.32M per example)
  // on stage 0, the rest on stage 1: the best a 2-way cut does.
  const std::vector<std::string> lines = model->Placement();
  ASSERT_EQ(lines.size(), one->Placement().size());
  EXPECT_EQ(lines.front(), "stage 0: " + one->Placement().front());
  EXPECT_EQ(lines[3], "stage 0: " + one->Placement()[3]);
  EXPECT_EQ(lines[4], "stage 1: " + one->Placement()[4]);
  EXPECT_EQ(lines.back(), "stage 1: softmax_cross_entropy (10 classes) on cpu");
}

TEST(PipelinedModelTest, FlagErrors) {
  auto code = [](const std::string& name, const std::string& device, int stages, int micro) {
    return MakePipelinedModel(name, 784, 10, device, PipelineOptions{stages, micro})
        .status()
        .code();
  };
  EXPECT_EQ(code("mlp", "cpu", 0, 4), Code::kInvalidArgument);
  EXPECT_EQ(code("mlp", "cpu", -1, 4), Code::kInvalidArgument);
  EXPECT_EQ(code("mlp", "cpu", 2, 0), Code::kInvalidArgument);
  EXPECT_EQ(code("mlp", "cpu", 4, 4), Code::kInvalidArgument);  // mlp has 3 layers
  EXPECT_EQ(code("mlp", "cpu", 3, 4), Code::kOk);
  EXPECT_EQ(code("mlp", "cpu,cpu,cpu", 2, 4), Code::kInvalidArgument);
  EXPECT_EQ(code("mlp", "cpu,cpu", 2, 4), Code::kOk);
  EXPECT_EQ(code("mlp", "cpu,", 2, 4), Code::kInvalidArgument);
  EXPECT_EQ(code("mlp", "cpu,abacus", 2, 4), Code::kInvalidArgument);
  EXPECT_EQ(code("resnet", "cpu", 2, 4), Code::kInvalidArgument);
  const Status too_many = MakePipelinedModel("mlp", 784, 10, "cpu", {4, 4}).status();
  EXPECT_NE(too_many.message().find("has only 3 layers"), std::string::npos) << too_many.ToString();
  const Status mismatch = MakePipelinedModel("mlp", 784, 10, "cpu,cpu,cpu", {2, 4}).status();
  EXPECT_NE(mismatch.message().find("names 3 devices for 2 pipeline stages"), std::string::npos)
      << mismatch.ToString();
}

TEST(PipelinedModelTest, RejectsWhatOneModelRejects) {
  auto model = MustMakePipelined("mlp", 2, 2);
  const std::vector<Tensor> params = InitialParams(*model, 1);
  std::vector<Tensor> grads;
  Batch bad = RandomBatch(6, 784, 10, 2);
  bad.labels[5] = 10;
  const StatusOr<float> loss = model->ComputeGradients(params, bad, &grads);
  EXPECT_EQ(loss.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(model->Evaluate(params, Batch{0, 784, {}, {}}).status().code(), Code::kInvalidArgument);
  std::vector<Tensor> too_few(params.begin(), params.end() - 1);
  EXPECT_EQ(model->Evaluate(too_few, RandomBatch(4, 784, 10, 3)).status().code(),
            Code::kInvalidArgument);
  std::vector<float> probabilities;
  EXPECT_EQ(model->Predict(params, RandomBatch(4, 783, 10, 3), &probabilities).code(),
            Code::kInvalidArgument);
}

TEST(PipelinedModelTest, PredictsNothingForAnEmptyBatchLikeTheUnsplitModel) {
  auto model = MustMakePipelined("cnn", 2, 2);
  auto one = MustMakeModel("cnn");
  const std::vector<Tensor> params = InitialParams(*model, 1);
  for (Model* m : {model.get(), one.get()}) {
    std::vector<float> probabilities = {1.0f};
    ASSERT_TRUE(m->Predict(params, Batch{0, 784, {}, {}}, &probabilities).ok());
    EXPECT_TRUE(probabilities.empty());
  }
}

// Stages on two fake devices (memory that is not the host's): activations
// and gradients cross between them through host copies, buffers are reused,
// and a device's failure fails the step, naming the stage.
TEST(PipelinedModelTest, OnFakeDevices) {
  std::vector<std::unique_ptr<Kernels>> kernels;
  std::vector<FakeDeviceKernels*> devices;
  for (const char* name : {"fake:0", "fake:1"}) {
    auto device = std::make_unique<FakeDeviceKernels>(name);
    devices.push_back(device.get());
    kernels.push_back(std::move(device));
  }
  auto model = MakePipelinedModelOnKernels("cnn", 784, 10, std::move(kernels), 3).value();
  EXPECT_EQ(model->device(), "fake:0,fake:1");
  ExpectSameAsUnsplit("cnn", *model, 9);

  const std::vector<Tensor> params = InitialParams(*model, 1);
  const Batch batch = RandomBatch(9, 784, 10, 2);
  std::vector<Tensor> grads;
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  const int64_t allocations[] = {devices[0]->allocations(), devices[1]->allocations()};
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  EXPECT_EQ(devices[0]->allocations(), allocations[0]);
  EXPECT_EQ(devices[1]->allocations(), allocations[1]);

  devices[1]->InjectError(Internal("CUDA error: out of memory"));
  const StatusOr<float> failed = model->ComputeGradients(params, batch, &grads);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Code::kInternal);
  EXPECT_EQ(failed.status().message(), "stage 1: CUDA error: out of memory");
}

}  // namespace
}  // namespace pst

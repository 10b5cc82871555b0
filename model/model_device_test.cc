// SequentialModel on a back end without host memory (FakeDeviceKernels): it
// computes exactly what it does on the CPU with every kernel pointer in
// device memory, copies only the step's inputs and gradients, allocates
// nothing on a step of a batch size it has seen, and returns the device's
// failures.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu_kernels.h"
#include "model/fake_device_kernels.h"
#include "model/model_test_util.h"
#include "model/zoo/model_zoo.h"

namespace pst {
namespace {

// A zoo model on one back end the test made; *kernels keeps a view of it.
template <typename K>
std::unique_ptr<Model> ModelOn(const std::string& name, int64_t input_dim, K** kernels) {
  auto owned = std::make_unique<K>();
  *kernels = owned.get();
  std::vector<std::unique_ptr<Kernels>> list;
  list.push_back(std::move(owned));
  auto model = MakeModelOnKernels(name, input_dim, /*num_classes=*/10, std::move(list));
  CHECK(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

int64_t Bytes(const std::vector<Tensor>& tensors) {
  int64_t n = 0;
  for (const Tensor& t : tensors) n += t.num_bytes();
  return n;
}

bool BitEqual(const Tensor& a, const Tensor& b) {
  return a.num_bytes() == b.num_bytes() && std::memcmp(a.data(), b.data(), a.num_bytes()) == 0;
}

class DeviceModelTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DeviceModelTest, MatchesTheCpuExactly) {
  const std::string name = GetParam();
  CpuKernels* cpu;
  FakeDeviceKernels* device;
  auto on_cpu = ModelOn(name, 784, &cpu);
  auto on_device = ModelOn(name, 784, &device);
  EXPECT_EQ(on_device->device(), "fake:0");
  const std::vector<Tensor> params = InitialParams(*on_cpu, 1);
  std::vector<Tensor> want = AlignedGrads(*on_cpu);
  std::vector<Tensor> got = AlignedGrads(*on_device);
  for (int step = 0; step < 2; ++step) {
    const Batch batch = RandomBatch(16, 784, 10, 2 + step);
    const StatusOr<float> want_loss = on_cpu->ComputeGradients(params, batch, &want);
    const StatusOr<float> got_loss = on_device->ComputeGradients(params, batch, &got);
    ASSERT_TRUE(want_loss.ok()) << want_loss.status().ToString();
    ASSERT_TRUE(got_loss.ok()) << got_loss.status().ToString();
    EXPECT_EQ(*got_loss, *want_loss);
    for (size_t v = 0; v < want.size(); ++v) {
      EXPECT_TRUE(BitEqual(got[v], want[v])) << on_cpu->variables()[v].name;
    }
    const auto want_eval = on_cpu->Evaluate(params, batch);
    const auto got_eval = on_device->Evaluate(params, batch);
    ASSERT_TRUE(got_eval.ok()) << got_eval.status().ToString();
    EXPECT_EQ(got_eval->loss_sum, want_eval->loss_sum);
    EXPECT_EQ(got_eval->correct, want_eval->correct);
    EXPECT_EQ(got_eval->count, want_eval->count);
  }
}

TEST_P(DeviceModelTest, StepsOfASeenBatchSizeAllocateNothing) {
  FakeDeviceKernels* device;
  auto model = ModelOn(GetParam(), 784, &device);
  const std::vector<Tensor> params = InitialParams(*model, 1);
  std::vector<Tensor> grads;
  const Batch batch = RandomBatch(16, 784, 10, 2);
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  ASSERT_TRUE(model->Evaluate(params, batch).ok());
  const int64_t allocations = device->allocations();
  EXPECT_GT(allocations, 0);

  const int64_t to_device = device->bytes_to_device();
  const int64_t to_host = device->bytes_to_host();
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
  EXPECT_EQ(device->allocations(), allocations);
  // A step copies its inputs in and its gradients out, and nothing else.
  const int64_t batch_bytes = batch.size * (batch.feature_dim * sizeof(float) + sizeof(int32_t));
  EXPECT_EQ(device->bytes_to_device() - to_device, Bytes(params) + batch_bytes);
  EXPECT_EQ(device->bytes_to_host() - to_host, Bytes(grads));

  // A smaller (last) batch and evaluation reuse the buffers too.
  ASSERT_TRUE(model->ComputeGradients(params, RandomBatch(5, 784, 10, 3), &grads).ok());
  ASSERT_TRUE(model->Evaluate(params, RandomBatch(7, 784, 10, 4)).ok());
  EXPECT_EQ(device->allocations(), allocations);
  // A larger one grows them, once.
  ASSERT_TRUE(model->ComputeGradients(params, RandomBatch(32, 784, 10, 5), &grads).ok());
  const int64_t grown = device->allocations();
  EXPECT_GT(grown, allocations);
  ASSERT_TRUE(model->ComputeGradients(params, RandomBatch(32, 784, 10, 6), &grads).ok());
  EXPECT_EQ(device->allocations(), grown);
}

TEST_P(DeviceModelTest, ReturnsTheDevicesFailure) {
  FakeDeviceKernels* device;
  auto model = ModelOn(GetParam(), 784, &device);
  const std::vector<Tensor> params = InitialParams(*model, 1);
  std::vector<Tensor> grads;
  const Batch batch = RandomBatch(8, 784, 10, 2);
  ASSERT_TRUE(model->ComputeGradients(params, batch, &grads).ok());

  device->InjectError(Internal("CUDA error: an illegal memory access"));
  const StatusOr<float> loss = model->ComputeGradients(params, batch, &grads);
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.status().code(), Code::kInternal);
  EXPECT_EQ(loss.status().message(), "CUDA error: an illegal memory access");

  device->InjectError(Internal("cuDNN failed"));
  const auto eval = model->Evaluate(params, batch);
  ASSERT_FALSE(eval.ok());
  EXPECT_EQ(eval.status().message(), "cuDNN failed");

  // Taken once: the next step is clean.
  EXPECT_TRUE(model->ComputeGradients(params, batch, &grads).ok());
}

TEST_P(DeviceModelTest, OutOfDeviceMemoryIsAnErrorNotACrash) {
  FakeDeviceKernels* device;
  auto model = ModelOn(GetParam(), 784, &device);
  const std::vector<Tensor> params = InitialParams(*model, 1);
  std::vector<Tensor> grads;
  ASSERT_TRUE(model->ComputeGradients(params, RandomBatch(8, 784, 10, 2), &grads).ok());
  // 1 MiB more than batch 8 takes; batch 4096's features alone are 12.8 MB.
  device->set_memory_limit(device->live_bytes() + (1 << 20));

  const StatusOr<float> big =
      model->ComputeGradients(params, RandomBatch(4096, 784, 10, 3), &grads);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), Code::kResourceExhausted);
  EXPECT_NE(big.status().message().find("fake:0"), std::string::npos);
  // The model still runs the batch size that fits.
  EXPECT_TRUE(model->ComputeGradients(params, RandomBatch(8, 784, 10, 4), &grads).ok());
}

INSTANTIATE_TEST_SUITE_P(Zoo, DeviceModelTest, ::testing::Values("mlp", "mlp_relu", "cnn"));

}  // namespace
}  // namespace pst

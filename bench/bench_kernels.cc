// bench_kernels: what the compute kernels and a model's training step cost
// (DESIGN.md section 12).
//
// Measures, in one thread (oneDNN: --intra_op_threads), on float32 buffers
// of uniform random values:
//  1. Kernels, called through the Kernels interface on buffers in the back
//     end's memory, on "cpu" with the Eigen kernels and, where built in,
//     the oneDNN ones, and, when it can be made, on "gpu:0":
//     - matmul forward, backward-input and backward-weights at (B,IN,OUT) =
//       (64,784,256) (mlp_relu's first layer), (64,800,500) (cnn's dense0)
//       and (64,2048,2048) (wide_mlp's middle layer): 2*B*IN*OUT flops each;
//     - conv2d forward, backward-input and backward-weights at LeNet's two
//       layers, batch 64, NHWC: conv0 28x28x1 -> 24x24x20 and conv1
//       12x12x20 -> 8x8x50, 5x5 filters: 2*B*P*Q*K*R*S*C flops each;
//     - 2x2 max-pool forward and backward at those layers' outputs
//       (3 comparisons per output, counted as flops; the backward as 1 flop
//       per output);
//     - relu forward and backward (1 flop per element) at cnn's conv0 output
//       and mlp_relu's first hidden layer, batch 64;
//     - softmax cross-entropy with its gradient at (B,C) = (64,10) and
//       (64,1000), counted as 5 flops per logit (max, subtract, exp, sum,
//       gradient scale);
//     - batch norm (mnist_cnn_bn.spec's layers: after conv0, B*24*24 rows of
//       20 channels; after conv1, B*8*8 rows of 50; after dense0, B rows of
//       500): the column moments (4 flops per element: add, subtract,
//       square, add), the forward pass (2) and the backward pass with dx
//       (10: two sums, then dx).
//     Each is reported as microseconds per call, GFLOP/s and GB/s (bytes of
//     its inputs and outputs, each counted once, over the time).
//  2. Training examples/s of --models (zoo names or .spec files; default
//     mlp_relu and cnn) in one process, on each of
//     those back ends: per step
//     Model::ComputeGradients on a batch of 64 synthetic examples (uniform
//     pixels, random labels; 8 batches cycled), then plain SGD on the params.
// Every figure gets a warm-up that also sizes the repeats, then the median
// of --repeats timed repeats (SteadyClock() around a loop of
// calls; nothing else runs inside the loop; a GPU's queue is drained before
// the clock stops).
// With mlp_relu among --models, the last line of the output is
// "mlp_relu_examples_per_s: X", on the default cpu kernels.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_main.h"
#include "bench/bench_stats.h"
#include "bench/bench_timing.h"
#include "common/batch.h"
#include "common/clock.h"
#include "common/input_shape.h"
#include "common/split.h"
#include "common/tensor.h"
#include "kernels/kernels.h"
#include "model/layers/initializer.h"
#include "model/zoo/model_zoo.h"

DEFINE_int32(repeats, 3, "Timed repeats per figure; the median is reported");
DEFINE_double(kernel_repeat_s, 0.1, "Seconds per timed repeat of a kernel");
DEFINE_double(train_repeat_s, 1.0, "Seconds per timed repeat of a training loop");
DEFINE_int32(batch_size, 64, "Batch size of the kernels and training steps");
DEFINE_int32(intra_op_threads, 1, "Threads of each oneDNN kernel call");
DEFINE_string(models, "mlp_relu,cnn",
              "Models of the training table, comma-separated: model zoo names, or "
              "paths of model spec files (ending in .spec)");
DEFINE_bool(kernel_table, true, "Print the kernels table (false: only the training table)");

namespace pst {
namespace {

// A column of the tables: a device and the options of its kernels.
struct BackEnd {
  std::string name;  // "cpu/eigen", "cpu/onednn", "gpu:0"
  std::string device;
  KernelsOptions options;
};

// The cpu kernels this build has, the default first, then gpu:0 when it can
// be made.
std::vector<BackEnd> BackEnds() {
  std::vector<BackEnd> list;
  for (CpuKernelsKind kind : AvailableCpuKernels()) {
    BackEnd cpu{std::string("cpu/") + CpuKernelsName(kind), "cpu", {}};
    cpu.options.cpu_kernels = kind;
    cpu.options.intra_op_threads = FLAGS_intra_op_threads;
    list.push_back(cpu);
  }
  if (MakeKernels("gpu:0").ok()) list.push_back({"gpu:0", "gpu:0", {}});
  return list;
}

// Seconds per call of `fn`: warm-up calls (at least 3 and a fifth of a
// repeat) estimate the cost, then each of --repeats repeats times enough
// calls to last about `repeat_s`; the median repeat is returned. For a back
// end that runs asynchronously, `wait` waits for the work fn queued; it runs
// once after the warm-up and after each repeat's calls, inside the timing.
double TimePerCall(
    const std::function<void()>& fn, double repeat_s, const std::function<void()>& wait = [] {}) {
  int64_t warmup_calls = 0;
  const MonotonicClock::TimePoint warm_start = SteadyClock().Now();
  while (warmup_calls < 3 || Seconds(SteadyClock().Now() - warm_start) < repeat_s / 5) {
    fn();
    ++warmup_calls;
  }
  wait();
  const double estimate = Seconds(SteadyClock().Now() - warm_start) / warmup_calls;
  const int64_t calls = std::max<int64_t>(1, std::llround(repeat_s / estimate));
  std::vector<double> per_call;
  for (int r = 0; r < FLAGS_repeats; ++r) {
    const MonotonicClock::TimePoint start = SteadyClock().Now();
    for (int64_t i = 0; i < calls; ++i) fn();
    wait();
    per_call.push_back(Seconds(SteadyClock().Now() - start) / calls);
  }
  return Median(per_call);
}

std::vector<float> RandomFloats(int64_t n, std::mt19937* rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(*rng);
  return v;
}

std::vector<int32_t> RandomLabels(int64_t n, int classes, std::mt19937* rng) {
  std::uniform_int_distribution<int32_t> dist(0, classes - 1);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(*rng);
  return v;
}

// A buffer of `bytes` in `k`'s memory, holding `host` unless it is null.
std::shared_ptr<DeviceBuffer> OnDevice(Kernels& k, size_t bytes, const void* host = nullptr) {
  StatusOr<std::unique_ptr<DeviceBuffer>> made = k.Allocate(bytes);
  CHECK(made.ok()) << made.status().ToString();
  std::shared_ptr<DeviceBuffer> buffer = std::move(made).value();
  if (host != nullptr) k.CopyToDevice(host, buffer->data(), bytes);
  return buffer;
}

template <typename T>
std::shared_ptr<DeviceBuffer> OnDevice(Kernels& k, const std::vector<T>& host) {
  return OnDevice(k, host.size() * sizeof(T), host.data());
}

// One kernel at one size. `run` calls it once on buffers it owns.
struct KernelCase {
  std::string kernel;
  std::string size;
  double flops = 0;
  double bytes = 0;
  std::function<void()> run;
};

std::string Dims(std::initializer_list<int64_t> dims) {
  std::string s;
  for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

void AddMatmulCases(Kernels& k, int64_t B, int64_t IN, int64_t OUT, std::mt19937* rng,
                    std::vector<KernelCase>* cases) {
  const std::string size = Dims({B, IN, OUT});
  const double flops = 2.0 * B * IN * OUT;
  const double bytes = 4.0 * (B * IN + IN * OUT + B * OUT);
  auto x = OnDevice(k, RandomFloats(B * IN, rng));
  auto w = OnDevice(k, RandomFloats(IN * OUT, rng));
  auto b = OnDevice(k, RandomFloats(OUT, rng));
  auto dy = OnDevice(k, RandomFloats(B * OUT, rng));
  auto y = OnDevice(k, 4 * B * OUT);
  auto dx = OnDevice(k, 4 * B * IN);
  auto dw = OnDevice(k, 4 * IN * OUT);
  cases->push_back({"matmul_forward", size, flops, bytes, [=, &k] {
                      k.MatmulForward(x->f32(), w->f32(), b->f32(), y->f32(), B, IN, OUT);
                    }});
  cases->push_back({"matmul_backward_input", size, flops, bytes, [=, &k] {
                      k.MatmulBackwardInput(dy->f32(), w->f32(), dx->f32(), B, IN, OUT);
                    }});
  cases->push_back({"matmul_backward_weights", size, flops, bytes, [=, &k] {
                      k.MatmulBackwardWeights(x->f32(), dy->f32(), dw->f32(), B, IN, OUT);
                    }});
}

Conv2DShape LeNetConv(int64_t side, int64_t in_channels, int64_t filters) {
  Conv2DShape shape;
  shape.height = shape.width = side;
  shape.in_channels = in_channels;
  shape.filter_height = shape.filter_width = 5;
  shape.out_channels = filters;
  return shape;
}

void AddConvCases(Kernels& k, const std::string& layer, const Conv2DShape& s, int64_t B,
                  std::mt19937* rng, std::vector<KernelCase>* cases) {
  const int64_t x_size = B * s.height * s.width * s.in_channels;
  const int64_t w_size = s.filter_height * s.filter_width * s.in_channels * s.out_channels;
  const int64_t y_size = B * s.out_height() * s.out_width() * s.out_channels;
  const std::string size = layer + " " + Dims({B, s.height, s.width, s.in_channels}) + "*" +
                           Dims({s.filter_height, s.filter_width, s.out_channels});
  const double flops = 2.0 * y_size * s.filter_height * s.filter_width * s.in_channels;
  const double bytes = 4.0 * (x_size + w_size + y_size);
  auto x = OnDevice(k, RandomFloats(x_size, rng));
  auto w = OnDevice(k, RandomFloats(w_size, rng));
  auto b = OnDevice(k, RandomFloats(s.out_channels, rng));
  auto dy = OnDevice(k, RandomFloats(y_size, rng));
  auto y = OnDevice(k, 4 * y_size);
  auto dx = OnDevice(k, 4 * x_size);
  auto dw = OnDevice(k, 4 * w_size);
  cases->push_back({"conv2d_forward", size, flops, bytes,
                    [=, &k] { k.Conv2DForward(x->f32(), w->f32(), b->f32(), y->f32(), s, B); }});
  cases->push_back({"conv2d_backward_input", size, flops, bytes,
                    [=, &k] { k.Conv2DBackwardInput(dy->f32(), w->f32(), dx->f32(), s, B); }});
  cases->push_back({"conv2d_backward_weights", size, flops, bytes,
                    [=, &k] { k.Conv2DBackwardWeights(x->f32(), dy->f32(), dw->f32(), s, B); }});
}

void AddMaxPoolCases(Kernels& k, int64_t B, int64_t H, int64_t W, int64_t C, std::mt19937* rng,
                     std::vector<KernelCase>* cases) {
  const int64_t x_size = B * H * W * C, y_size = B * (H / 2) * (W / 2) * C;
  const std::string size = Dims({B, H, W, C});
  auto x = OnDevice(k, RandomFloats(x_size, rng));
  auto dy = OnDevice(k, RandomFloats(y_size, rng));
  auto y = OnDevice(k, 4 * y_size);
  auto dx = OnDevice(k, 4 * x_size);
  auto argmax = OnDevice(k, 4 * y_size);
  // The backward pass needs a forward pass's argmax.
  k.MaxPool2x2Forward(x->f32(), y->f32(), argmax->i32(), B, H, W, C);
  cases->push_back({"maxpool2x2_forward", size, 3.0 * y_size, 4.0 * (x_size + 2 * y_size), [=, &k] {
                      k.MaxPool2x2Forward(x->f32(), y->f32(), argmax->i32(), B, H, W, C);
                    }});
  cases->push_back(
      {"maxpool2x2_backward", size, 1.0 * y_size, 4.0 * (x_size + 2 * y_size),
       [=, &k] { k.MaxPool2x2Backward(dy->f32(), argmax->i32(), dx->f32(), B, H, W, C); }});
}

void AddReluCases(Kernels& k, int64_t B, int64_t dim, std::mt19937* rng,
                  std::vector<KernelCase>* cases) {
  const int64_t n = B * dim;
  const std::string size = Dims({B, dim});
  auto x = OnDevice(k, RandomFloats(n, rng));
  auto dy = OnDevice(k, RandomFloats(n, rng));
  auto y = OnDevice(k, 4 * n);
  auto dx = OnDevice(k, 4 * n);
  cases->push_back(
      {"relu_forward", size, 1.0 * n, 8.0 * n, [=, &k] { k.ReluForward(x->f32(), y->f32(), n); }});
  cases->push_back({"relu_backward", size, 1.0 * n, 12.0 * n,
                    [=, &k] { k.ReluBackward(x->f32(), dy->f32(), dx->f32(), n); }});
}

void AddSoftmaxCase(Kernels& k, int64_t B, int64_t C, std::mt19937* rng,
                    std::vector<KernelCase>* cases) {
  auto logits = OnDevice(k, RandomFloats(B * C, rng));
  auto labels = OnDevice(k, RandomLabels(B, static_cast<int>(C), rng));
  auto dlogits = OnDevice(k, 4 * B * C);
  cases->push_back(
      {"softmax_xent_with_grad", Dims({B, C}), 5.0 * B * C, 4.0 * (2 * B * C + B),
       [=, &k] { k.SoftmaxCrossEntropy(logits->f32(), labels->i32(), dlogits->f32(), B, C); }});
}

void AddBatchNormCases(Kernels& k, const std::string& layer, int64_t rows, int64_t C,
                       std::mt19937* rng, std::vector<KernelCase>* cases) {
  const int64_t n = rows * C;
  const std::string size = layer + " " + Dims({rows, C});
  auto x = OnDevice(k, RandomFloats(n, rng));
  auto dy = OnDevice(k, RandomFloats(n, rng));
  auto gamma = OnDevice(k, RandomFloats(C, rng));
  auto beta = OnDevice(k, RandomFloats(C, rng));
  auto moments = OnDevice(k, 4 * 2 * C);  // mean, then variance
  auto y = OnDevice(k, 4 * n);
  auto dx = OnDevice(k, 4 * n);
  auto grads = OnDevice(k, 4 * 2 * C);  // dgamma, then dbeta
  const auto mean = [moments] { return moments->f32(); };
  const auto variance = [moments, C] { return moments->f32() + C; };
  k.ColumnMoments(x->f32(), mean(), variance(), rows, C);
  cases->push_back({"batchnorm_moments", size, 4.0 * n, 4.0 * (n + 2 * C),
                    [=, &k] { k.ColumnMoments(x->f32(), mean(), variance(), rows, C); }});
  cases->push_back({"batchnorm_forward", size, 2.0 * n, 4.0 * (2 * n + 4 * C), [=, &k] {
                      k.BatchNormForward(x->f32(), mean(), variance(), gamma->f32(), beta->f32(),
                                         1e-3, y->f32(), rows, C);
                    }});
  cases->push_back({"batchnorm_backward", size, 10.0 * n, 4.0 * (3 * n + 5 * C), [=, &k] {
                      k.BatchNormBackward(x->f32(), dy->f32(), mean(), variance(), gamma->f32(),
                                          1e-3, grads->f32(), grads->f32() + C, dx->f32(), rows, C);
                    }});
}

// Every kernel case of the header comment, run by `kernels`, which must
// outlive them. The same list for every back end: row i is the same case.
std::vector<KernelCase> KernelCases(Kernels& kernels, int64_t B) {
  std::mt19937 rng(1);
  std::vector<KernelCase> cases;
  AddMatmulCases(kernels, B, 784, 256, &rng, &cases);
  AddMatmulCases(kernels, B, 800, 500, &rng, &cases);
  AddMatmulCases(kernels, B, 2048, 2048, &rng, &cases);
  AddConvCases(kernels, "conv0", LeNetConv(28, 1, 20), B, &rng, &cases);
  AddConvCases(kernels, "conv1", LeNetConv(12, 20, 50), B, &rng, &cases);
  AddMaxPoolCases(kernels, B, 24, 24, 20, &rng, &cases);
  AddMaxPoolCases(kernels, B, 8, 8, 50, &rng, &cases);
  AddReluCases(kernels, B, 24 * 24 * 20, &rng, &cases);
  AddReluCases(kernels, B, 256, &rng, &cases);
  AddSoftmaxCase(kernels, B, 10, &rng, &cases);
  AddSoftmaxCase(kernels, B, 1000, &rng, &cases);
  AddBatchNormCases(kernels, "bn0", B * 24 * 24, 20, &rng, &cases);
  AddBatchNormCases(kernels, "bn1", B * 8 * 8, 50, &rng, &cases);
  AddBatchNormCases(kernels, "bn2", B, 500, &rng, &cases);
  return cases;
}

// One table row per kernel case, one column group per back end.
void RunKernels(const std::vector<BackEnd>& back_ends) {
  std::vector<std::unique_ptr<Kernels>> kernels;
  std::vector<std::vector<KernelCase>> cases;  // [back end][case]
  std::vector<std::function<void()>> waits;    // [back end]
  for (const BackEnd& back_end : back_ends) {
    StatusOr<std::unique_ptr<Kernels>> made = MakeKernels(back_end.device, back_end.options);
    CHECK(made.ok()) << made.status().ToString();
    kernels.push_back(std::move(made).value());
    Kernels& k = *kernels.back();
    cases.push_back(KernelCases(k, FLAGS_batch_size));
    // A copy to the host completes, so it waits for the work queued before
    // it; the check catches any failure of the timed calls.
    auto probe = OnDevice(k, sizeof(float));
    waits.push_back([&k, probe] {
      float value;
      k.CopyToHost(probe->data(), &value, sizeof(value));
      const Status error = k.TakeError();
      CHECK(error.ok()) << error.ToString();
    });
  }
  std::printf("kernels, batch %d, median of %d repeats:\n%-24s %-28s", FLAGS_batch_size,
              FLAGS_repeats, "kernel", "size");
  for (const BackEnd& back_end : back_ends) {
    std::printf(" %18s %9s %8s", (back_end.name + " us/call").c_str(), "GFLOP/s", "GB/s");
  }
  std::printf("\n");
  for (size_t i = 0; i < cases.front().size(); ++i) {
    const KernelCase& c = cases.front()[i];
    std::printf("%-24s %-28s", c.kernel.c_str(), c.size.c_str());
    for (size_t d = 0; d < back_ends.size(); ++d) {
      const double s = TimePerCall(cases[d][i].run, FLAGS_kernel_repeat_s, waits[d]);
      std::printf(" %18.1f %9.2f %8.2f", s * 1e6, c.flops / s * 1e-9, c.bytes / s * 1e-9);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}

// The model name --models' entry `entry` stands for: a zoo name as it is,
// a .spec file's text as SpecModelName.
std::string ModelName(const std::string& entry) {
  const std::string suffix = ".spec";
  if (entry.size() < suffix.size() ||
      entry.compare(entry.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return entry;
  }
  std::ifstream in(entry);
  CHECK(in) << entry << ": cannot read the model spec";
  std::stringstream text;
  text << in.rdbuf();
  return SpecModelName(text.str());
}

// A spec file by its name less folders and ".spec".
std::string DisplayName(const std::string& entry) {
  const std::string name = entry.substr(entry.find_last_of('/') + 1);
  return name.substr(0, name.rfind(".spec"));
}

// Examples/s of ComputeGradients + SGD for model `name` on `back_end`.
double TrainingExamplesPerSecond(const std::string& name, const BackEnd& back_end) {
  // MNIST's 28x28 images (a spec's convolutions need their shape; a zoo
  // model takes the 784 features as that image).
  const InputShape input = IsSpecModel(name) ? InputShape({28, 28, 1}) : InputShape(784);
  StatusOr<std::unique_ptr<Model>> made =
      MakeModel(name, input, /*num_classes=*/10, back_end.device, back_end.options);
  CHECK(made.ok()) << made.status().ToString();
  Model& model = **made;
  std::vector<Tensor> params, grads;
  for (const VariableSpec& spec : model.variables()) {
    params.push_back(InitializeVariable(spec, /*seed=*/1));
  }
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::vector<Batch> batches(8);
  for (Batch& batch : batches) {
    batch.size = FLAGS_batch_size;
    batch.feature_dim = model.input_dim();
    batch.features.resize(batch.size * batch.feature_dim);
    for (float& x : batch.features) x = pixel(rng);
    batch.labels = RandomLabels(batch.size, 10, &rng);
  }
  size_t next = 0;
  const float learning_rate = 0.01f;
  const auto step = [&] {
    const StatusOr<float> loss = model.ComputeGradients(params, batches[next], &grads);
    CHECK(loss.ok()) << loss.status().ToString();
    next = (next + 1) % batches.size();
    for (size_t v = 0; v < params.size(); ++v) {
      float* p = params[v].f32();
      const float* g = grads[v].f32();
      // Read once: a call per element in the loop condition keeps the
      // compiler from vectorising the update.
      const int64_t n = params[v].num_elements();
      for (int64_t i = 0; i < n; ++i) {
        p[i] -= learning_rate * g[i];
      }
    }
  };
  return FLAGS_batch_size / TimePerCall(step, FLAGS_train_repeat_s);
}

int Main() {
  const std::vector<BackEnd> back_ends = BackEnds();
  if (FLAGS_kernel_table) RunKernels(back_ends);
  std::printf(
      "\ntraining, batch %d, synthetic data, ComputeGradients + SGD, "
      "%d oneDNN thread(s), median of %d repeats:\n%-14s",
      FLAGS_batch_size, FLAGS_intra_op_threads, FLAGS_repeats, "model");
  for (const BackEnd& back_end : back_ends) {
    std::printf(" %21s %10s", (back_end.name + " examples/s").c_str(), "ms/step");
  }
  std::printf("\n");
  double mlp_relu_cpu = 0;
  for (const std::string& model : SplitCommas(FLAGS_models)) {
    std::printf("%-14s", DisplayName(model).c_str());
    const std::string name = ModelName(model);
    for (size_t d = 0; d < back_ends.size(); ++d) {
      const double eps = TrainingExamplesPerSecond(name, back_ends[d]);
      std::printf(" %21.0f %10.2f", eps, 1e3 * FLAGS_batch_size / eps);
      if (model == "mlp_relu" && d == 0) mlp_relu_cpu = eps;  // default cpu
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  if (mlp_relu_cpu > 0) std::printf("mlp_relu_examples_per_s: %.0f\n", mlp_relu_cpu);
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  if (!pst::StartBenchmark(
          &argc, &argv,
          "bench_kernels [--repeats=N] [--kernel_repeat_s=S] "
          "[--train_repeat_s=S] [--batch_size=B] [--intra_op_threads=T] [--models=A,B] "
          "[--kernel_table=false]: "
          "kernel GFLOP/s and training examples/s",
          "bench/bench_kernels.cc")) {
    return 0;
  }
  return pst::Main();
}

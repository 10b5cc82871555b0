// bench_transport: what the parameter-server transport costs, measured against
// bare ZeroMQ and against training in one process (DESIGN.md section 12).
//
// Measures, in one run, on 127.0.0.1 TCP loopback:
//  1. Framework: an in-process ps (an RpcServer with a PsService, wired as in
//     ps/ps_task.cc minus the chief's ShardAppliedNotifier; its own ZeroMQ context;
//     async mode) holding one float32 variable per size (default 4 KiB,
//     1 MiB, 4 MiB; SGD, one shard), and a PsClient (its own context) doing
//     rounds of Pull(variable) then Push(a gradient of the same shape), one
//     request in flight. Reports payload bytes/s ((pulled + pushed bytes) /
//     time) and the latency of a pull, a push and a round (mean, p50, p99).
//  2. Bare ZeroMQ: a ROUTER server thread and a DEALER client doing the same
//     exchanges ("pull" = small request answered by a large reply, "push" =
//     large request answered by a small reply); the large frames are sent
//     zero-copy from pre-allocated buffers and nobody touches the payload.
//  3. Training: examples/s of "1 ps + 1 worker" (an in-process ps over TCP,
//     Model::ComputeGradients -> PushThenPull (the push, and the next step's
//     pull of all model variables right behind it), as in async
//     worker/worker_task.cc) vs the same model trained in one process
//     (ComputeGradients, then the SGD optimizer applied to the local params),
//     mlp_relu, batch 100, the same batches in the same order. MNIST from
//     $MNIST_DIR when set, otherwise synthetic random batches.
//  1b. The same rounds with --wire_dtype=bfloat16 (a second PsClient on the
//     same ps), alternated with the float32 ones: wire bytes per round and
//     payload/s relative to float32, and the conversion's own speed (GB/s
//     of float32 narrowed and widened, against a memcpy).
// Each configuration gets a warm-up, then --repeats timed repeats of
// --seconds_per_config / --repeats seconds each; a repeat alternates the
// configuration and its baseline in --slices short slices so that load from
// elsewhere hits both alike. Tables show the median repeat.
// The last line of the output is "ratio_vs_zmq_4MiB: X", framework bytes/s
// over bare ZeroMQ bytes/s at 4 MiB.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bench/bench_main.h"
#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "common/batch.h"
#include "common/bfloat16.h"
#include "common/clock.h"
#include "common/tensor.h"
#include "data/dataset.h"
#include "data/idx_reader.h"
#include "data/input_pipeline.h"
#include "model/initializer.h"
#include "model/model_zoo.h"
#include "ps/optimizers/optimizer.h"
#include "ps/ps_client.h"
#include "ps/ps_service.h"
#include "transport/server.h"
#include "transport/zmq_transport.h"

DEFINE_double(seconds_per_config, 1.5,
              "Timed seconds per configuration, split over --repeats repeats");
DEFINE_int32(repeats, 3, "Timed repeats per configuration; the median is reported");
DEFINE_string(sizes, "4096,1048576,4194304",
              "Comma-separated variable sizes in bytes (multiples of 4); "
              "4194304 is added when missing (it gives the last line)");
DEFINE_int32(slices, 5,
             "Each repeat alternates framework and baseline in this many "
             "slices");
DEFINE_int32(ps_threads, 2, "Handler threads of the in-process ps (the ps default)");
DEFINE_string(train_model, "mlp_relu", "Model of the training section");
DEFINE_int32(train_batch_size, 100, "Batch size of the training section");
DEFINE_int32(train_batches, 50, "Distinct batches prepared for the training section (cycled)");

namespace pst {
namespace {

constexpr size_t k4MiB = size_t{4} << 20;
constexpr uint64_t kClusterId = 1;

double Seconds(MonotonicClock::Duration d) { return std::chrono::duration<double>(d).count(); }
double Micros(MonotonicClock::Duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

void CheckOk(const Status& status, const char* what) {
  CHECK(status.ok()) << what << ": " << status.ToString();
}

std::string SizeLabel(size_t bytes) {
  if (bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

std::vector<size_t> ParseSizes(const std::string& text) {
  std::vector<size_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const long long v = std::atoll(item.c_str());
    CHECK(v > 0 && v % 4 == 0) << "--sizes: '" << item << "' is not a positive multiple of 4";
    sizes.push_back(static_cast<size_t>(v));
  }
  if (std::find(sizes.begin(), sizes.end(), k4MiB) == sizes.end()) sizes.push_back(k4MiB);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * sorted.size()));
  rank = std::min(std::max<size_t>(rank, 1), sorted.size());
  return sorted[rank - 1];
}

struct Latency {
  double mean = 0, p50 = 0, p99 = 0;  // microseconds
};

Latency Summarize(std::vector<double> us) {
  Latency l;
  if (us.empty()) return l;
  std::sort(us.begin(), us.end());
  l.mean = std::accumulate(us.begin(), us.end(), 0.0) / us.size();
  l.p50 = Percentile(us, 0.50);
  l.p99 = Percentile(us, 0.99);
  return l;
}

// One timed repeat of pull+push rounds.
struct Repeat {
  double bytes_per_s = 0;
  int64_t rounds = 0;
  Latency pull, push, round;
};

// The median of each figure over the repeats.
Repeat MedianRepeat(const std::vector<Repeat>& reps) {
  auto med = [&reps](auto field) {
    std::vector<double> v;
    for (const Repeat& r : reps) v.push_back(field(r));
    return Median(v);
  };
  Repeat m;
  m.bytes_per_s = med([](const Repeat& r) { return r.bytes_per_s; });
  m.rounds = static_cast<int64_t>(med([](const Repeat& r) { return double(r.rounds); }));
  auto lat = [&med](auto pick) {
    Latency l;
    l.mean = med([&pick](const Repeat& r) { return pick(r).mean; });
    l.p50 = med([&pick](const Repeat& r) { return pick(r).p50; });
    l.p99 = med([&pick](const Repeat& r) { return pick(r).p99; });
    return l;
  };
  m.pull = lat([](const Repeat& r) { return r.pull; });
  m.push = lat([](const Repeat& r) { return r.push; });
  m.round = lat([](const Repeat& r) { return r.round; });
  return m;
}

// Pull+push rounds timed over several slices of one repeat.
class RoundTimer {
 public:
  RoundTimer(std::function<void()> pull, std::function<void()> push)
      : pull_(std::move(pull)), push_(std::move(push)) {}

  // Untimed rounds: at least `min_rounds` and `seconds`.
  void WarmUp(int min_rounds, double seconds) {
    const auto until = SteadyClock().Now() + std::chrono::duration<double>(seconds);
    for (int n = 0; n < min_rounds || SteadyClock().Now() < until; ++n) {
      pull_();
      push_();
    }
  }

  // Two untimed rounds, then timed rounds for `seconds` (at least 3).
  void Slice(double seconds) {
    WarmUp(2, 0);
    const auto start = SteadyClock().Now();
    const auto end = start + std::chrono::duration_cast<MonotonicClock::Duration>(
                                 std::chrono::duration<double>(seconds));
    auto t0 = start;
    int n = 0;
    do {
      pull_();
      const auto t1 = SteadyClock().Now();
      push_();
      const auto t2 = SteadyClock().Now();
      pull_us_.push_back(Micros(t1 - t0));
      push_us_.push_back(Micros(t2 - t1));
      round_us_.push_back(Micros(t2 - t0));
      t0 = t2;
      ++n;
    } while (t0 < end || n < 3);
    timed_ += t0 - start;
  }

  // The figures of the slices since the last call, which starts a new repeat.
  Repeat TakeRepeat(size_t bytes) {
    Repeat r;
    r.rounds = static_cast<int64_t>(round_us_.size());
    r.bytes_per_s = 2.0 * bytes * r.rounds / Seconds(timed_);
    r.pull = Summarize(std::move(pull_us_));
    r.push = Summarize(std::move(push_us_));
    r.round = Summarize(std::move(round_us_));
    pull_us_.clear();
    push_us_.clear();
    round_us_.clear();
    timed_ = MonotonicClock::Duration::zero();
    return r;
  }

 private:
  const std::function<void()> pull_, push_;
  std::vector<double> pull_us_, push_us_, round_us_;
  MonotonicClock::Duration timed_ = MonotonicClock::Duration::zero();
};

// ---------------------------------------------------------------------------
// The framework: an in-process ps, wired like ps/ps_task.cc.

class InProcessPs {
 public:
  explicit InProcessPs(int num_threads) : context_(1) {
    ServerOptions options;
    options.name = "ps:0";
    options.endpoint = "tcp://127.0.0.1:*";
    options.role = wire::Role::Ps;
    options.index = 0;
    options.num_threads = num_threads;
    options.serve_inline = [this](const ReceivedMessage& r) { return service_->Quick(r); };
    server_ = std::make_unique<RpcServer>(
        context_, options,
        [this](const ReceivedMessage& r, RequestContext&) { return service_->Handle(r); });
    // No chief here: no step notifier (async training never notifies).
    service_ = std::make_unique<PsService>(server_.get(), nullptr);
    CheckOk(server_->Start(), "starting the ps");
  }
  ~InProcessPs() {
    server_->Stop();
    server_->Wait();
    server_.reset();  // joins the handler threads before the service goes
  }

  // Bytes the ps received and sent so far.
  uint64_t bytes() const { return server_->bytes_in() + server_->bytes_out(); }

  // A cluster of this one ps.
  ClusterSpec Cluster() const {
    // bound_endpoint() resolves the wildcard: "tcp://127.0.0.1:N".
    const std::string& endpoint = server_->bound_endpoint();
    const std::string prefix = "tcp://";
    CHECK_EQ(endpoint.compare(0, prefix.size(), prefix), 0) << endpoint;
    StatusOr<HostPort> hp = ParseHostPort("ps", endpoint.substr(prefix.size()));
    CheckOk(hp.status(), "ps endpoint");
    ClusterSpec cluster;
    cluster.ps.push_back(*hp);
    return cluster;
  }

 private:
  zmq::context_t context_;
  std::unique_ptr<PsService> service_;
  std::unique_ptr<RpcServer> server_;  // last: destroyed first
};

ClientIdentity BenchIdentity() {
  ClientIdentity identity;
  identity.role = wire::Role::Worker;
  identity.index = 0;
  identity.cluster_id = kClusterId;
  return identity;
}

ShardConfig SgdConfig() {
  ShardConfig config;
  config.optimizer.name = "sgd";
  config.optimizer.learning_rate = 0.01f;
  return config;
}

// ---------------------------------------------------------------------------
// Bare ZeroMQ: the least a pull/push exchange needs.

// First frame of every bare request (8 bytes); the ack of a push echoes it.
struct BareControl {
  uint32_t op;
  uint32_t index;  // into the sizes
};
enum : uint32_t { kBarePull = 1, kBarePush = 2, kBareStop = 3 };

void NoFree(void* /*data*/, void* /*hint*/) {}

std::unique_ptr<uint8_t[]> FilledBuffer(size_t bytes, uint8_t value) {
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[bytes]);
  std::memset(buffer.get(), value, bytes);  // touch the pages now
  return buffer;
}

// A ROUTER thread: "pull" [ctrl] -> [payload] (zero-copy, pre-allocated),
// "push" [ctrl][payload] -> [ctrl]; the payload is never touched.
class BareServer {
 public:
  explicit BareServer(const std::vector<size_t>& sizes)
      : sizes_(sizes), context_(1), router_(context_, zmq::socket_type::router) {
    for (size_t bytes : sizes_) buffers_.push_back(FilledBuffer(bytes, 0x3c));
    router_.set(zmq::sockopt::linger, 0);
    router_.bind("tcp://127.0.0.1:*");
    endpoint_ = router_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { Loop(); });
  }
  ~BareServer() { thread_.join(); }  // the client's Stop() ends Loop()
  const std::string& endpoint() const { return endpoint_; }

 private:
  void Loop() {
    for (;;) {
      zmq::message_t routing_id, control;
      CHECK(router_.recv(routing_id));
      CHECK(router_.recv(control));
      BareControl c;
      CHECK_EQ(control.size(), sizeof c);
      std::memcpy(&c, control.data(), sizeof c);
      if (control.more()) {
        zmq::message_t payload;  // dropped untouched
        CHECK(router_.recv(payload));
        CHECK(!payload.more());
      }
      router_.send(routing_id, zmq::send_flags::sndmore);
      if (c.op == kBarePull) {
        zmq::message_t reply(buffers_[c.index].get(), sizes_[c.index], NoFree, nullptr);
        router_.send(reply, zmq::send_flags::none);
      } else {
        router_.send(control, zmq::send_flags::none);
      }
      if (c.op == kBareStop) return;
    }
  }

  const std::vector<size_t> sizes_;
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  zmq::context_t context_;
  zmq::socket_t router_;  // used by thread_ only once it runs
  std::string endpoint_;
  std::thread thread_;
};

class BareClient {
 public:
  BareClient(const std::string& endpoint, const std::vector<size_t>& sizes)
      : sizes_(sizes), context_(1), dealer_(context_, zmq::socket_type::dealer) {
    for (size_t bytes : sizes_) buffers_.push_back(FilledBuffer(bytes, 0x5a));
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.connect(endpoint);
  }

  void Pull(uint32_t index) {
    const BareControl c{kBarePull, index};
    dealer_.send(zmq::buffer(&c, sizeof c), zmq::send_flags::none);
    zmq::message_t reply;
    CHECK(dealer_.recv(reply));
    CHECK_EQ(reply.size(), sizes_[index]);
  }

  void Push(uint32_t index) {
    const BareControl c{kBarePush, index};
    dealer_.send(zmq::buffer(&c, sizeof c), zmq::send_flags::sndmore);
    zmq::message_t payload(buffers_[index].get(), sizes_[index], NoFree, nullptr);
    dealer_.send(payload, zmq::send_flags::none);
    zmq::message_t ack;
    CHECK(dealer_.recv(ack));
    CHECK_EQ(ack.size(), sizeof c);
  }

  void Stop() {
    const BareControl c{kBareStop, 0};
    dealer_.send(zmq::buffer(&c, sizeof c), zmq::send_flags::none);
    zmq::message_t ack;
    CHECK(dealer_.recv(ack));
  }

 private:
  const std::vector<size_t> sizes_;
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  zmq::context_t context_;
  zmq::socket_t dealer_;
};

// ---------------------------------------------------------------------------
// Section 1 + 2.

struct TransportResult {
  size_t bytes = 0;
  std::vector<Repeat> framework, bare;
  // The framework with --wire_dtype=bfloat16; its bytes/s count the float32
  // payload it stands for, and its wire bytes per round over float32's.
  std::vector<Repeat> bf16;
  double bf16_wire_ratio = 0;
};

std::vector<TransportResult> RunTransport(const std::vector<size_t>& sizes, double seconds,
                                          double warmup_s) {
  // The framework side: one variable per size on one ps shard.
  std::vector<VariableSpec> specs;
  std::vector<Tensor> initial, grads;
  for (size_t bytes : sizes) {
    VariableSpec spec;
    spec.name = "var_" + std::to_string(bytes);
    spec.shape = {static_cast<int64_t>(bytes / 4)};
    specs.push_back(spec);
    Tensor value(DType::kFloat32, spec.shape);
    std::fill(value.f32(), value.f32() + value.num_elements(), 0.5f);
    initial.push_back(value);
    Tensor grad(DType::kFloat32, spec.shape);
    std::fill(grad.f32(), grad.f32() + grad.num_elements(), 1e-3f);
    grads.push_back(grad);
  }
  PlacementOptions placement_options;
  placement_options.num_shards = 1;
  StatusOr<Placement> placement = Placement::Compute(specs, placement_options);
  CheckOk(placement.status(), "placement");

  InProcessPs ps(FLAGS_ps_threads);
  zmq::context_t client_context(1);
  ZmqTransport client_transport(client_context);
  PsClient client(client_transport, ps.Cluster(), std::move(placement).value(), BenchIdentity());
  CheckOk(client.Initialize(SgdConfig(), initial), "initialize");
  ClientIdentity narrow_identity = BenchIdentity();
  narrow_identity.wire_dtype = DType::kBFloat16;
  PsClient narrow_client(client_transport, ps.Cluster(), client.placement(), narrow_identity);

  BareServer bare_server(sizes);
  BareClient bare(bare_server.endpoint(), sizes);

  std::vector<TransportResult> results;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const std::vector<int> variable = {static_cast<int>(k)};
    const std::vector<Tensor> grad = {grads[k]};
    std::vector<Tensor> values;
    // One checked round before timing.
    CheckOk(client.Pull(variable, &values), "pull");
    CHECK_EQ(values[0].num_bytes(), sizes[k]);
    StatusOr<PushSummary> pushed = client.Push(variable, grad, false);
    CheckOk(pushed.status(), "push");
    CHECK_EQ(pushed->applied, 1u);

    auto fw_pull = [&] { CheckOk(client.Pull(variable, &values), "pull"); };
    auto fw_push = [&] { CheckOk(client.Push(variable, grad, false).status(), "push"); };
    auto bf16_pull = [&] { CheckOk(narrow_client.Pull(variable, &values), "pull"); };
    auto bf16_push = [&] { CheckOk(narrow_client.Push(variable, grad, false).status(), "push"); };
    // Wire bytes of one round each, from the ps's own counters.
    uint64_t before = ps.bytes();
    fw_pull();
    fw_push();
    const double f32_round_bytes = ps.bytes() - before;
    before = ps.bytes();
    bf16_pull();
    bf16_push();
    const double bf16_round_bytes = ps.bytes() - before;
    const uint32_t index = static_cast<uint32_t>(k);
    auto zmq_pull = [&bare, index] { bare.Pull(index); };
    auto zmq_push = [&bare, index] { bare.Push(index); };

    RoundTimer framework(fw_pull, fw_push), baseline(zmq_pull, zmq_push),
        narrow(bf16_pull, bf16_push);
    framework.WarmUp(5, warmup_s);
    baseline.WarmUp(5, warmup_s);
    narrow.WarmUp(5, warmup_s);
    TransportResult result;
    result.bytes = sizes[k];
    result.bf16_wire_ratio = bf16_round_bytes / f32_round_bytes;
    for (int rep = 0; rep < FLAGS_repeats; ++rep) {
      // Framework and baseline alternate in short slices (and swap which
      // goes first), so that load from elsewhere hits both alike.
      for (int slice = 0; slice < FLAGS_slices; ++slice) {
        if ((rep + slice) % 2 == 0) {
          framework.Slice(seconds / FLAGS_slices);
          baseline.Slice(seconds / FLAGS_slices);
          narrow.Slice(seconds / FLAGS_slices);
        } else {
          narrow.Slice(seconds / FLAGS_slices);
          baseline.Slice(seconds / FLAGS_slices);
          framework.Slice(seconds / FLAGS_slices);
        }
      }
      result.framework.push_back(framework.TakeRepeat(sizes[k]));
      result.bare.push_back(baseline.TakeRepeat(sizes[k]));
      result.bf16.push_back(narrow.TakeRepeat(sizes[k]));
    }
    results.push_back(std::move(result));
  }
  bare.Stop();
  return results;
}

// What narrowing and widening cost per byte of float32, against a memcpy of
// the same float32 bytes: the conversion must cost less than the half of the
// bytes it saves.
void PrintConversionSpeed(size_t bytes) {
  const int64_t n = static_cast<int64_t>(bytes / 4);
  std::vector<float> wide(n, 0.1f), back(n);
  std::vector<uint16_t> narrow(n);
  auto gb_per_s = [&](const std::function<void()>& run) {
    run();  // warm the caches and pages
    const auto start = SteadyClock().Now();
    int rounds = 0;
    do {
      run();
      ++rounds;
    } while (SteadyClock().Now() - start < std::chrono::milliseconds(200));
    return 4.0 * n * rounds / Seconds(SteadyClock().Now() - start) / 1e9;
  };
  const double to_bf16 = gb_per_s([&] { FloatToBFloat16(wide.data(), narrow.data(), n); });
  const double to_f32 = gb_per_s([&] { BFloat16ToFloat(narrow.data(), back.data(), n); });
  const double copy = gb_per_s([&] { std::memcpy(back.data(), wide.data(), n * sizeof(float)); });
  std::printf("conversion of %s, GB/s of float32: narrow %.1f, widen %.1f, memcpy %.1f\n",
              SizeLabel(bytes).c_str(), to_bf16, to_f32, copy);
}

// ---------------------------------------------------------------------------
// Section 3.

struct TrainingData {
  std::vector<Batch> batches;
  std::string source;
};

TrainingData MakeBatches(int64_t batch_size, int count, int64_t input_dim, int64_t num_classes) {
  TrainingData data;
  const char* dir = std::getenv("MNIST_DIR");
  if (dir != nullptr && *dir != '\0') {
    StatusOr<Dataset> train = LoadMnist(dir, /*train=*/true);
    CheckOk(train.status(), "LoadMnist");
    InputPipelineOptions options;
    options.batch_size = batch_size;
    options.seed = 1;
    StatusOr<std::unique_ptr<InputPipeline>> input = InputPipeline::Create(*train, options);
    CheckOk(input.status(), "InputPipeline");
    (*input)->Start();
    for (int i = 0; i < count; ++i) {
      StatusOr<PipelineBatch> next = (*input)->Next();
      CheckOk(next.status(), "InputPipeline::Next");
      data.batches.push_back(std::move(next->batch));
    }
    (*input)->Stop();
    data.source = "MNIST from MNIST_DIR=" + std::string(dir) + " (" + std::to_string(count) +
                  " batches drawn through InputPipeline)";
    return data;
  }
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  std::uniform_int_distribution<int32_t> label(0, static_cast<int32_t>(num_classes) - 1);
  for (int i = 0; i < count; ++i) {
    Batch b;
    b.size = batch_size;
    b.feature_dim = input_dim;
    b.features.resize(batch_size * input_dim);
    for (float& f : b.features) f = pixel(rng);
    b.labels.resize(batch_size);
    for (int32_t& l : b.labels) l = label(rng);
    data.batches.push_back(std::move(b));
  }
  data.source =
      "synthetic random batches (MNIST_DIR not set; " + std::to_string(count) + " batches)";
  return data;
}

// A training loop that runs `steps` steps over the batches, cycling.
class Trainer {
 public:
  virtual ~Trainer() = default;
  // Returns the loss of the last step.
  float Run(const std::vector<Batch>& batches, int64_t steps) {
    float loss = 0;
    for (int64_t i = 0; i < steps; ++i) {
      loss = Step(batches[cursor_ % batches.size()]);
      ++cursor_;
    }
    return loss;
  }

 protected:
  virtual float Step(const Batch& batch) = 0;

 private:
  uint64_t cursor_ = 0;
};

// 1 ps + 1 worker: the loop of worker/worker_task.cc.
class ClusterTrainer : public Trainer {
 public:
  ClusterTrainer(const std::string& model_name, const std::vector<Tensor>& initial)
      : ps_(FLAGS_ps_threads), context_(1) {
    StatusOr<std::unique_ptr<Model>> model = MakeModel(model_name);
    CheckOk(model.status(), "MakeModel");
    model_ = std::move(model).value();
    PlacementOptions placement_options;
    placement_options.num_shards = 1;
    StatusOr<Placement> placement =
        Placement::Compute(WithGlobalStep(model_->variables()), placement_options);
    CheckOk(placement.status(), "placement");
    client_ = std::make_unique<PsClient>(transport_, ps_.Cluster(), std::move(placement).value(),
                                         BenchIdentity());
    std::vector<Tensor> values = {Tensor(DType::kInt64, {})};  // global step 0
    for (const Tensor& t : initial) values.push_back(t.Clone());
    CheckOk(client_->Initialize(SgdConfig(), values), "initialize");
    // Model variables are 1..n of the placement's list (0 is the global step).
    variables_.resize(model_->variables().size());
    std::iota(variables_.begin(), variables_.end(), 1);
  }
  ~ClusterTrainer() override { client_.reset(); }
  int64_t global_step() const { return global_step_; }

 protected:
  float Step(const Batch& batch) override {
    if (!pulled_) CheckOk(client_->Pull(variables_, &params_), "pull");
    StatusOr<float> loss = model_->ComputeGradients(params_, batch, &grads_);
    CheckOk(loss.status(), "ComputeGradients");
    StatusOr<PushSummary> pushed =
        client_->PushThenPull(variables_, grads_, true, variables_, &params_);
    CheckOk(pushed.status(), "push");
    pulled_ = true;
    global_step_ = pushed->global_step;
    return *loss;
  }

 private:
  InProcessPs ps_;
  zmq::context_t context_;
  ZmqTransport transport_{context_};
  std::unique_ptr<Model> model_;
  std::unique_ptr<PsClient> client_;
  std::vector<int> variables_;
  std::vector<Tensor> params_, grads_;
  bool pulled_ = false;  // params_ hold the values for the next step
  int64_t global_step_ = 0;
};

// The same model in one process: gradients, then SGD applied locally.
class LocalTrainer : public Trainer {
 public:
  LocalTrainer(const std::string& model_name, const std::vector<Tensor>& initial) {
    StatusOr<std::unique_ptr<Model>> model = MakeModel(model_name);
    CheckOk(model.status(), "MakeModel");
    model_ = std::move(model).value();
    StatusOr<std::unique_ptr<Optimizer>> optimizer = MakeOptimizer(SgdConfig().optimizer);
    CheckOk(optimizer.status(), "MakeOptimizer");
    optimizer_ = std::move(optimizer).value();
    for (const Tensor& t : initial) {
      params_.push_back(t.Clone());
      slots_.push_back(optimizer_->CreateSlots(t.num_elements()));
    }
  }

 protected:
  float Step(const Batch& batch) override {
    StatusOr<float> loss = model_->ComputeGradients(params_, batch, &grads_);
    CheckOk(loss.status(), "ComputeGradients");
    for (size_t i = 0; i < params_.size(); ++i) {
      optimizer_->Apply(params_[i].f32(), grads_[i].f32(), params_[i].num_elements(), 1.0f,
                        &slots_[i]);
    }
    return *loss;
  }

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<Tensor> params_, grads_;
  std::vector<SlotSet> slots_;
};

struct TrainingResult {
  std::string source;
  int64_t steps_per_repeat = 0;
  std::vector<double> cluster_eps, local_eps;  // examples/s per repeat
  float cluster_loss = 0, local_loss = 0;      // of the last step
};

TrainingResult RunTraining(double seconds, double warmup_s) {
  TrainingResult result;
  StatusOr<std::unique_ptr<Model>> probe = MakeModel(FLAGS_train_model);
  CheckOk(probe.status(), "MakeModel");
  const int64_t batch_size = FLAGS_train_batch_size;
  TrainingData data = MakeBatches(batch_size, std::max(1, FLAGS_train_batches),
                                  (*probe)->input_dim(), (*probe)->num_classes());
  result.source = data.source;
  std::vector<Tensor> initial;
  for (const VariableSpec& spec : (*probe)->variables()) {
    initial.push_back(InitializeVariable(spec, /*seed=*/1));
  }

  ClusterTrainer cluster(FLAGS_train_model, initial);
  LocalTrainer local(FLAGS_train_model, initial);
  // Warm-up: the same number of steps for both, so that both then see the
  // same batches in the same order; its timing sizes the timed repeats.
  int64_t warmup_steps = 0;
  const auto warm_start = SteadyClock().Now();
  const auto warm_until = warm_start + std::chrono::duration<double>(warmup_s);
  while (warmup_steps < 5 || SteadyClock().Now() < warm_until) {
    cluster.Run(data.batches, 1);
    ++warmup_steps;
  }
  const double step_s = Seconds(SteadyClock().Now() - warm_start) / warmup_steps;
  local.Run(data.batches, warmup_steps);
  const int slices = FLAGS_slices;
  const int64_t steps_per_slice = std::max<int64_t>(1, std::llround(seconds / step_s / slices));
  result.steps_per_repeat = steps_per_slice * slices;

  // Like the transport: each repeat alternates the two in slices.
  for (int rep = 0; rep < FLAGS_repeats; ++rep) {
    MonotonicClock::Duration cluster_time{}, local_time{};
    auto run = [&](Trainer& trainer, float* loss, MonotonicClock::Duration* time) {
      const auto start = SteadyClock().Now();
      *loss = trainer.Run(data.batches, steps_per_slice);
      *time += SteadyClock().Now() - start;
    };
    for (int slice = 0; slice < slices; ++slice) {
      if ((rep + slice) % 2 == 0) {
        run(cluster, &result.cluster_loss, &cluster_time);
        run(local, &result.local_loss, &local_time);
      } else {
        run(local, &result.local_loss, &local_time);
        run(cluster, &result.cluster_loss, &cluster_time);
      }
    }
    const double examples = static_cast<double>(result.steps_per_repeat * batch_size);
    result.cluster_eps.push_back(examples / Seconds(cluster_time));
    result.local_eps.push_back(examples / Seconds(local_time));
  }
  CHECK_EQ(cluster.global_step(), warmup_steps + FLAGS_repeats * result.steps_per_repeat);
  return result;
}

// ---------------------------------------------------------------------------

std::string Join(const std::vector<double>& v, double scale, const char* format) {
  std::string s;
  char buf[64];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, format, x * scale);
    s += (s.empty() ? "" : " ") + std::string(buf);
  }
  return s;
}

int Main() {
  const auto program_start = SteadyClock().Now();
  const std::vector<size_t> sizes = ParseSizes(FLAGS_sizes);
  const int repeats = std::max(1, FLAGS_repeats);
  FLAGS_repeats = repeats;
  FLAGS_slices = std::max(1, FLAGS_slices);
  const double seconds = FLAGS_seconds_per_config / repeats;
  const double warmup_s = std::max(0.02, 0.1 * seconds);

  std::printf(
      "bench_transport: ps transport vs bare ZeroMQ, and 1 ps + 1 "
      "worker vs one process\n");
  std::printf("measures (127.0.0.1 TCP, one request in flight):\n");
  std::printf(
      "  1. framework: in-process ps (RpcServer + PsService, %d "
      "handler threads)\n",
      FLAGS_ps_threads);
  std::printf(
      "     + PsClient: Pull(var) then Push(grad of var's shape); "
      "SGD, 1 shard\n");
  std::printf(
      "  2. bare ZeroMQ: ROUTER thread + DEALER; pull = 8 B request "
      "-> payload;\n");
  std::printf(
      "     push = 8 B + payload -> 8 B; payload frames zero-copy, "
      "never touched\n");
  std::printf(
      "  3. training: %s, batch %d: examples/s of 1 ps + 1 worker "
      "(ComputeGradients\n",
      FLAGS_train_model.c_str(), FLAGS_train_batch_size);
  std::printf(
      "     -> push + next pull back to back) vs the model + SGD in one "
      "process\n");
  std::printf(
      "method: per configuration a %.2f s warm-up, then %d repeats "
      "of %.2f s,\n",
      warmup_s, repeats, seconds);
  std::printf(
      "  each alternating with its baseline in %d slices; the median "
      "repeat is\n",
      FLAGS_slices);
  std::printf(
      "  shown. MB = 1e6 bytes; bytes/s counts payload pulled + "
      "pushed.\n\n");
  std::fflush(stdout);

  const std::vector<TransportResult> transport = RunTransport(sizes, seconds, warmup_s);
  double ratio_4mib = 0;
  std::printf("== transport: pull+push rounds ==\n");
  std::printf("%-8s | %14s | %13s | %5s | %18s | %13s\n", "size", "framework MB/s", "bare zmq MB/s",
              "ratio", "framework round us", "bare round us");
  for (const TransportResult& r : transport) {
    const Repeat fw = MedianRepeat(r.framework), bare = MedianRepeat(r.bare);
    const double ratio = fw.bytes_per_s / bare.bytes_per_s;
    if (r.bytes == k4MiB) ratio_4mib = ratio;
    std::printf("%-8s | %14.0f | %13.0f | %5.2f | %18.1f | %13.1f\n", SizeLabel(r.bytes).c_str(),
                fw.bytes_per_s / 1e6, bare.bytes_per_s / 1e6, ratio, fw.round.mean,
                bare.round.mean);
  }
  std::printf("\n== --wire_dtype=bfloat16 vs float32: pull+push rounds ==\n");
  std::printf("%-8s | %16s | %15s | %16s | %15s\n", "size", "bf16 wire bytes", "bf16 round us",
              "float32 round us", "bf16_vs_float32");
  for (const TransportResult& r : transport) {
    const Repeat fw = MedianRepeat(r.framework), narrow = MedianRepeat(r.bf16);
    std::printf("%-8s | %15.2fx | %15.1f | %16.1f | %15.2f\n", SizeLabel(r.bytes).c_str(),
                r.bf16_wire_ratio, narrow.round.mean, fw.round.mean,
                narrow.bytes_per_s / fw.bytes_per_s);
  }
  std::printf("(bf16_vs_float32: float32-equivalent payload per second, bfloat16 over float32)\n");
  PrintConversionSpeed(sizes.back());
  std::printf("\nlatency in us (median of %d repeats), mean / p50 / p99:\n", repeats);
  std::printf("%-8s %-9s | %-23s | %-23s | %-23s | %s\n", "size", "path", "pull", "push", "round",
              "rounds/repeat");
  auto lat = [](const Latency& l) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%7.1f %7.1f %7.1f", l.mean, l.p50, l.p99);
    return std::string(buf);
  };
  for (const TransportResult& r : transport) {
    const Repeat fw = MedianRepeat(r.framework), bare = MedianRepeat(r.bare);
    std::printf("%-8s %-9s | %s | %s | %s | %lld\n", SizeLabel(r.bytes).c_str(), "framework",
                lat(fw.pull).c_str(), lat(fw.push).c_str(), lat(fw.round).c_str(),
                static_cast<long long>(fw.rounds));
    std::printf("%-8s %-9s | %s | %s | %s | %lld\n", "", "bare zmq", lat(bare.pull).c_str(),
                lat(bare.push).c_str(), lat(bare.round).c_str(),
                static_cast<long long>(bare.rounds));
  }
  std::printf("\nMB/s of each repeat (framework ; bare zmq):\n");
  for (const TransportResult& r : transport) {
    std::vector<double> fw, bare;
    for (const Repeat& x : r.framework) fw.push_back(x.bytes_per_s);
    for (const Repeat& x : r.bare) bare.push_back(x.bytes_per_s);
    std::printf("%-8s %s ; %s\n", SizeLabel(r.bytes).c_str(), Join(fw, 1e-6, "%.0f").c_str(),
                Join(bare, 1e-6, "%.0f").c_str());
  }
  std::fflush(stdout);

  const TrainingResult training = RunTraining(seconds, warmup_s);
  const double cluster_eps = Median(training.cluster_eps);
  const double local_eps = Median(training.local_eps);
  std::printf("\n== training: %s, batch %d ==\n", FLAGS_train_model.c_str(),
              FLAGS_train_batch_size);
  std::printf("data: %s\n", training.source.c_str());
  std::printf("%lld steps per repeat, same batches in the same order for both\n",
              static_cast<long long>(training.steps_per_repeat));
  std::printf("%-22s | %10s | %s\n", "configuration", "examples/s", "repeats");
  std::printf("%-22s | %10.0f | %s\n", "1 ps + 1 worker (TCP)", cluster_eps,
              Join(training.cluster_eps, 1, "%.0f").c_str());
  std::printf("%-22s | %10.0f | %s\n", "one process (local)", local_eps,
              Join(training.local_eps, 1, "%.0f").c_str());
  std::printf("last-step loss: cluster %.6f, local %.6f (%s)\n", training.cluster_loss,
              training.local_loss,
              training.cluster_loss == training.local_loss ? "identical" : "differ");
  std::printf("cluster_vs_local_examples_ratio: %.2f\n", cluster_eps / local_eps);

  std::printf("\ntook %.1f s\n", Seconds(SteadyClock().Now() - program_start));
  std::printf("ratio_vs_zmq_4MiB: %.2f\n", ratio_4mib);
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  FLAGS_minloglevel = 1;  // the ps logs its init at INFO; --minloglevel=0 shows it
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_transport [--seconds_per_config=S] [--sizes=B,B,...]: ps "
                           "pull/push vs bare "
                           "ZeroMQ on loopback, 1 ps + 1 worker training vs one process",
                           "bench/bench_transport.cc")) {
    return 0;
  }
  return pst::Main();
}

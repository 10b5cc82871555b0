// make_corpus: writes the seed inputs of the fuzzers into FOLDER/decode
// and FOLDER/tensor_file.
//  - fuzz_decode (layout in fuzz/fuzz_input.h): valid init, pull, push
//    (async and sync), status, save, restore and shutdown requests, and a
//    few that a ps must refuse.
//  - fuzz_tensor_file: checkpoint parts of fuzz_decode's shard (async
//    Momentum after two pushes, sync SGD) without their CRC32.
// The seeds in fuzz/corpus/ come from it:
//   build-fuzz/bin/fuzz_make_corpus fuzz/corpus
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/tensor_file.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_shard.h"
#include "ps/variable_store.h"
#include "transport/frames.h"
#include "transport/message.h"

namespace pst {
namespace fuzz {
namespace {

constexpr uint64_t kClusterId = 77;

std::string Bytes(const zmq::message_t& frame) {
  return std::string(static_cast<const char*>(frame.data()), frame.size());
}

Frames Encode(const OutgoingMessage& m, int worker = 0, uint64_t request_id = 1) {
  Frames frames;
  for (const zmq::message_t& f :
       EncodeMessage(m, {request_id, kClusterId, wire::Role::Worker, worker})) {
    frames.push_back(Bytes(f));
  }
  return frames;
}

Tensor Filled(Shape shape, float value) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] = value + 0.125f * i;
  return t;
}

Frames Pull(std::vector<std::string> names) {
  OutgoingMessage m;
  m.type = wire::MessageType::PullRequest;
  m.names = std::move(names);
  return Encode(m);
}

// Gradients for w [4,4] and b [4] (the fuzzer's shard), computed from
// version `version`.
OutgoingMessage PushMessage(int64_t version, bool increment_global_step) {
  OutgoingMessage m;
  m.type = wire::MessageType::PushRequest;
  m.tensors.push_back({"w", version, Filled({4, 4}, -1.0f)});
  m.tensors.push_back({"b", version, Filled({4}, 0.5f)});
  if (increment_global_step) {
    m.extras = [](flatbuffers::FlatBufferBuilder& fbb) {
      HeaderExtras extras;
      extras.push = wire::CreatePushParams(fbb, true);
      return extras;
    };
  }
  return m;
}

Frames SyncPush(int worker, int64_t step) {
  OutgoingMessage m = PushMessage(0, false);
  m.step = step;
  return Encode(m, worker);
}

Frames Init(const std::string& optimizer, bool sync) {
  OutgoingMessage m;
  m.type = wire::MessageType::InitRequest;
  m.tensors.push_back({"global_step", 0, Tensor(DType::kInt64, {})});
  m.tensors.push_back({"x", 0, Filled({3}, 2.0f)});
  m.tensors.push_back({"w", 0, Filled({4, 4}, 0.0f)});
  m.extras = [optimizer, sync](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    auto params = wire::CreateOptimizerParams(fbb, fbb.CreateString(optimizer), 0.1f, 0.9f, false,
                                              0.1f, 0.9f, 0.999f, 1e-8f);
    extras.init = wire::CreateInitParams(
        fbb, params, wire::StalenessPolicy::Scale, 4, fbb.CreateString("global_step"),
        sync ? wire::TrainingMode::Sync : wire::TrainingMode::Async, sync ? 2 : 0);
    return extras;
  };
  return Encode(m);
}

Frames Simple(wire::MessageType type) {
  OutgoingMessage m;
  m.type = type;
  return Encode(m);
}

Frames Checkpoint(wire::MessageType type, const std::string& name) {
  OutgoingMessage m;
  m.type = type;
  m.extras = [name](flatbuffers::FlatBufferBuilder& fbb) {
    HeaderExtras extras;
    extras.checkpoint = wire::CreateCheckpointParams(fbb, fbb.CreateString(name));
    return extras;
  };
  return Encode(m);
}

// The chief's k for a plateau schedule travels in header.step.
Frames LrLowerings(int64_t k) {
  OutgoingMessage m;
  m.type = wire::MessageType::LrLoweringsRequest;
  m.step = k;
  return Encode(m);
}

struct Seed {
  std::string name;
  uint8_t options;
  std::vector<Frames> messages;
};

std::vector<Seed> Seeds() {
  const uint8_t async = EncodeOptions(false, 0, 0), sync = EncodeOptions(true, 0, 0);
  std::vector<Seed> seeds;
  seeds.push_back({"async_pull", async, {Pull({"w", "b", "global_step"})}});
  seeds.push_back({"async_push", async, {Encode(PushMessage(0, true)), Pull({"w"})}});
  seeds.push_back(
      {"async_push_misaligned", EncodeOptions(false, 0, 1), {Encode(PushMessage(0, true))}});
  seeds.push_back(
      {"async_init_adam_push", async, {Init("adam", false), Pull({"x", "w"}), [] {
                                         OutgoingMessage m;
                                         m.type = wire::MessageType::PushRequest;
                                         m.tensors.push_back({"x", 0, Filled({3}, 1.0f)});
                                         return Encode(m);
                                       }()}});
  seeds.push_back({"sync_push_two_workers",
                   sync,
                   {SyncPush(0, 0), SyncPush(0, 0), SyncPush(1, 0), Pull({"w", "b"})}});
  seeds.push_back({"sync_stale", sync, {SyncPush(1, 0), SyncPush(0, 0), SyncPush(1, 0)}});
  seeds.push_back({"sync_init_momentum", sync, {Init("momentum", true), Pull({"x"})}});
  seeds.push_back({"status_shutdown",
                   EncodeOptions(false, 0, 2),
                   {Simple(wire::MessageType::ShardStatusRequest),
                    Simple(wire::MessageType::ShutdownRequest)}});
  {
    // Requests a ps must refuse, each leaving the shard as it was.
    OutgoingMessage wrong_shape;
    wrong_shape.type = wire::MessageType::PushRequest;
    wrong_shape.tensors.push_back({"w", 0, Filled({2, 8}, 1.0f)});
    OutgoingMessage unknown = wrong_shape;
    unknown.tensors = {{"nope", 0, Filled({4}, 1.0f)}};
    Frames truncated = Encode(PushMessage(0, false));
    truncated[0].resize(truncated[0].size() / 2);
    seeds.push_back({"refused_push",
                     EncodeOptions(false, 0, 3),
                     {Encode(wrong_shape), Encode(unknown), truncated}});
    seeds.push_back({"refused_other",
                     async,
                     {Pull({"nope"}), Init("rmsprop", false),
                      Simple(wire::MessageType::JoinRequest), Frames{}}});
  }
  seeds.push_back({"over_limit", EncodeOptions(false, 2, 0), {Encode(PushMessage(0, false))}});
  seeds.push_back(
      {"save_push_restore",
       async,
       {Checkpoint(wire::MessageType::SaveRequest, "ckpt-1"), Encode(PushMessage(0, true)),
        Checkpoint(wire::MessageType::RestoreRequest, "ckpt-1"),
        Checkpoint(wire::MessageType::RestoreRequest, "missing"),
        Checkpoint(wire::MessageType::SaveRequest, "../escape"), Pull({"w"})}});
  // The fuzzers' shard has no plateau schedule: each is refused, unchanged.
  seeds.push_back({"lr_lowerings",
                   async,
                   {LrLowerings(2), LrLowerings(-1), LrLowerings(int64_t{1} << 40),
                    Encode(PushMessage(0, true))}});
  return seeds;
}

// A checkpoint part of the fuzzers' shard, without its CRC32.
std::string PartBody(bool sync, const std::string& scratch) {
  VariableStore store;
  const Status init =
      store.Initialize(ShardConfigFor(sync, sync ? "sgd" : "momentum", 1), ShardValues());
  CHECK(init.ok()) << init.ToString();
  const std::vector<float> g(20, 0.125f);
  std::vector<Gradient> grads = {{"w", DType::kFloat32, {4, 4}, 0, g.data()},
                                 {"b", DType::kFloat32, {4}, 0, g.data() + 16}};
  for (int i = 0; i < 2; ++i) {
    auto pushed = sync ? store.SyncPush(grads, 0, i) : store.Push(grads, true);
    CHECK(pushed.ok()) << pushed.status().ToString();
  }
  auto snapshot = store.Snapshot();
  CHECK(snapshot.ok()) << snapshot.status().ToString();
  const auto written = WriteTensorFile(scratch, *snapshot);
  CHECK(written.ok()) << written.status().ToString();
  std::ifstream in(scratch, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(scratch);
  CHECK_GE(file.size(), 4u);
  file.resize(file.size() - 4);
  return file;
}

bool WriteSeed(const std::string& path, const std::string& bytes, const std::string& what) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  std::printf("%-40s %5zu bytes, %s\n", path.c_str(), bytes.size(), what.c_str());
  return true;
}

}  // namespace
}  // namespace fuzz
}  // namespace pst

int main(int argc, char** argv) {
  using namespace pst::fuzz;  // NOLINT: main is outside the namespace
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER (writes FOLDER/decode, FOLDER/tensor_file)\n", argv[0]);
    return 2;
  }
  const std::string decode = std::string(argv[1]) + "/decode";
  const std::string tensor_file = std::string(argv[1]) + "/tensor_file";
  std::filesystem::create_directories(decode);
  std::filesystem::create_directories(tensor_file);
  for (const Seed& seed : Seeds()) {
    std::string bytes(1, static_cast<char>(seed.options));
    for (const auto& m : seed.messages) AppendMessage(m, &bytes);
    if (!WriteSeed(decode + "/" + seed.name, bytes,
                   std::to_string(seed.messages.size()) + " messages")) {
      return 1;
    }
  }
  const std::string scratch = tensor_file + "/.scratch";
  if (!WriteSeed(tensor_file + "/async_momentum", PartBody(false, scratch), "part") ||
      !WriteSeed(tensor_file + "/sync_sgd", PartBody(true, scratch), "part")) {
    return 1;
  }
  return 0;
}

// fuzz_decode: libFuzzer target over what a ps does with bytes that arrive
// from the network (DESIGN.md section 4).
//
// Each input (layout in fuzz/fuzz_input.h) is one or more multipart
// messages, handed in order to a fresh shard: a PsService whose
// VariableStore holds "global_step" (int64 scalar), "w" (float32 [4,4]) and
// "b" (float32 [4]), in async or sync mode (SGD), with a checkpoint folder
// of its own (emptied before each input, on /dev/shm when there is one:
// saves fsync). Per message:
//  1. DecodeMessage(frames, limit) verifies it; a refusal must be
//     InvalidArgument or ResourceExhausted. Every frame is an exact-size
//     heap block (so ASan sees any read past it), optionally misaligned as
//     ZeroMQ's zero-copy receive delivers frames (PST_FUZZ_MISALIGN=0 in
//     the environment: never).
//  2. A verified message goes to PsService::Handle, as the ps's handler
//     threads would call it (no sockets: the service's RpcServer is a real
//     one that is never started).
//  3. Checks: the reply has the type that answers the request; it encodes
//     and decodes again; and when its status is an error, the store is
//     exactly as before the request (DESIGN.md: "the server's state is
//     unchanged"): every variable's value, dtype, shape, version, update
//     count and optimizer slots, the sync step and the counters.
// Any failed check is a CHECK failure, i.e. a crash libFuzzer reports.
#include <glog/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "fuzz/fuzz_input.h"
#include "fuzz/fuzz_shard.h"
#include "ps/ps_service.h"
#include "transport/frames.h"
#include "transport/message.h"
#include "transport/message_types.h"
#include "transport/server.h"

namespace pst {
namespace {

// A frame whose bytes live in their own heap block of exactly bytes.size()
// bytes, `misalign` bytes past the start of the allocation.
zmq::message_t ExactFrame(const std::string& bytes, size_t misalign) {
  if (bytes.empty()) return zmq::message_t();
  auto* block = new uint8_t[bytes.size() + misalign];
  std::memcpy(block + misalign, bytes.data(), bytes.size());
  return zmq::message_t(
      block + misalign, bytes.size(),
      [](void* /*data*/, void* hint) { delete[] static_cast<uint8_t*>(hint); }, block);
}

// The name of the first entry where two fingerprints differ.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream x(a), y(b);
  std::string line_a, line_b;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(x, line_a));
    const bool more_b = static_cast<bool>(std::getline(y, line_b));
    if (!more_a && !more_b) return "(none)";
    if (line_a != line_b || more_a != more_b) {
      const std::string& line = more_a ? line_a : line_b;
      if (line.compare(0, 12, "initialized=") == 0) return "the counters: " + line;
      return "'" + line.substr(0, line.find(' ')) + "'";
    }
  }
}

// The reply type that answers `request`, or Invalid when the request type is
// not one a ps serves (then ErrorReply is expected).
wire::MessageType ExpectedReply(wire::MessageType request) {
  using T = wire::MessageType;
  static const std::set<T> kServedByPs = {
      T::PullRequest,     T::PushRequest, T::InitRequest,    T::ShardStatusRequest,
      T::ShutdownRequest, T::SaveRequest, T::RestoreRequest, T::LrLoweringsRequest,
      T::ChainRequest,    T::ShipRequest, T::StreamsRequest, T::ExportCutRequest,
      T::TableRowsRequest};
  return kServedByPs.count(request) ? ReplyTypeOf(request) : T::Invalid;
}

// Touches everything a handler may read from a verified message.
void ReadAll(const ReceivedMessage& m) {
  volatile size_t sink = m.request_id() + m.step() + m.total_bytes();
  sink = sink + m.status().ToString().size();
  for (const TensorView& t : m.tensors()) {
    const Tensor copy = t.ToTensor();
    CHECK_EQ(copy.num_bytes(), t.num_bytes);
    CHECK_EQ(t.num_elements() * static_cast<int64_t>(DTypeSize(t.dtype)),
             static_cast<int64_t>(t.num_bytes));
    if (t.num_bytes) CHECK_EQ(std::memcmp(copy.data(), t.data, t.num_bytes), 0);
    sink = sink + t.name.size();
  }
}

// A shard as a ps runs it, minus the sockets.
class Shard {
 public:
  Shard(zmq::context_t& context, bool sync, const std::string& checkpoint_dir)
      : server_(context, ServerOptions(),
                [](const ReceivedMessage&, RequestContext&) {
                  return OutgoingMessage();  // never called: never started
                }),
        service_(&server_, /*notifier=*/nullptr, PsServiceOptions{0, checkpoint_dir}) {
    const Status s = service_.store().Initialize(fuzz::ShardConfigFor(sync), fuzz::ShardValues());
    CHECK(s.ok()) << s.ToString();
  }

  void Handle(const ReceivedMessage& request) {
    const std::string before = fuzz::Fingerprint(service_.store());
    const OutgoingMessage reply = service_.Handle(request);
    const char* request_type = wire::EnumNameMessageType(request.type());

    const wire::MessageType expected = ExpectedReply(request.type());
    if (expected == wire::MessageType::Invalid) {
      CHECK(reply.type == wire::MessageType::ErrorReply && !reply.status.ok())
          << "a " << request_type << " got a " << wire::EnumNameMessageType(reply.type)
          << " with status " << reply.status.ToString();
    } else {
      CHECK(reply.type == expected)
          << "a " << request_type << " got a " << wire::EnumNameMessageType(reply.type);
    }

    // What the handler thread sends must be a valid message.
    auto echoed = DecodeMessage(EncodeMessage(reply, Envelope{request.request_id()}), ~size_t{0});
    CHECK(echoed.ok()) << "the reply to a " << request_type
                       << " does not decode: " << echoed.status().ToString();
    CHECK(echoed->type() == reply.type);
    CHECK(echoed->status().code() == reply.status.code());
    ReadAll(*echoed);

    if (!reply.status.ok()) {
      const std::string after = fuzz::Fingerprint(service_.store());
      CHECK(before == after) << "a refused " << request_type << " (" << reply.status.ToString()
                             << ") changed " << FirstDifference(before, after);
    }
  }

 private:
  RpcServer server_;  // never started: cluster id, byte counters, Stop()
  PsService service_;
};

zmq::context_t& Context() {
  static auto* context = new zmq::context_t(1);
  return *context;
}

// This process's checkpoint folder, removed at exit (not after a crash).
const std::string& CheckpointDir() {
  static const std::string* dir = [] {
    namespace fs = std::filesystem;
    const fs::path base =
        fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string pattern = (base / "fuzz_decode.XXXXXX").string();
    PCHECK(mkdtemp(pattern.data()) != nullptr) << "mkdtemp " << pattern;
    return new std::string(pattern);  // never destroyed: used at exit
  }();
  static const bool cleanup_registered = [] {
    std::atexit([] { std::filesystem::remove_all(CheckpointDir()); });
    return true;
  }();
  (void)cleanup_registered;
  return *dir;
}

// PST_FUZZ_MISALIGN=0 in the environment keeps every frame aligned: until
// DecodeMessage copes with misaligned frames, the first misaligned input
// stops the fuzzer (UBSan: FlatBuffers member calls on misaligned tables).
bool MisalignedFramesAllowed() {
  static const bool allowed = [] {
    const char* env = std::getenv("PST_FUZZ_MISALIGN");
    return env == nullptr || std::string(env) != "0";
  }();
  return allowed;
}

}  // namespace
}  // namespace pst

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** argv) {
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = 2;  // the ps logs every init at INFO
  google::InitGoogleLogging((*argv)[0]);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pst;  // NOLINT: the entry point is outside the namespace
  std::vector<fuzz::Frames> messages;
  const fuzz::FuzzOptions options = fuzz::ParseInput(data, size, &messages);
  if (messages.empty()) return 0;
  // Each input starts without checkpoints: saved parts do not leak from
  // one input into the next.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(CheckpointDir())) {
    std::filesystem::remove_all(entry.path(), ignored);
  }
  Shard shard(Context(), options.sync, CheckpointDir());
  const size_t misalign = MisalignedFramesAllowed() ? options.misalign : 0;
  for (const fuzz::Frames& bytes : messages) {
    std::vector<zmq::message_t> frames;
    for (size_t i = 0; i < bytes.size(); ++i) {
      frames.push_back(ExactFrame(bytes[i], misalign));
    }
    StatusOr<ReceivedMessage> message = DecodeMessage(std::move(frames), options.max_message_bytes);
    if (!message.ok()) {
      const Code code = message.status().code();
      CHECK(code == Code::kInvalidArgument || code == Code::kResourceExhausted)
          << "DecodeMessage refused with " << message.status().ToString();
      continue;
    }
    ReadAll(*message);
    shard.Handle(*message);
  }
  return 0;
}

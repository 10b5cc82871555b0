// Shared-memory payloads through the real transport (Channel <-> RpcServer
// over ZeroMQ on 127.0.0.1), and the pieces that make them: the server's
// refusal of another cluster's rings, the cleanup of a killed client's.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "transport/channel.h"
#include "transport/frames.h"
#include "transport/server.h"
#include "transport/shm/shm_testing.h"
#include "transport/shm_client_link.h"
#include "transport/shm_server_peers.h"

namespace pst {
namespace {

// Whether `p` lies in a mapping of a pstrain segment of this process (the
// name stays in /proc/self/maps, "(deleted)" once unlinked).
bool InSegment(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto address = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/dev/shm/pst-") == std::string::npos) continue;
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2 && address >= begin &&
        address < end) {
      return true;
    }
  }
  return false;
}

Tensor Filled(int64_t elements, float value) {
  Tensor t(DType::kFloat32, {elements});
  for (int64_t i = 0; i < elements; ++i) t.f32()[i] = value + static_cast<float>(i % 7);
  return t;
}

bool Holds(const TensorView& v, int64_t elements, float value) {
  if (v.num_elements() != elements) return false;
  for (int64_t i = 0; i < elements; ++i) {
    if (v.f32()[i] != value + static_cast<float>(i % 7)) return false;
  }
  return true;
}

OutgoingMessage Request(int64_t elements, float value) {
  OutgoingMessage m;
  m.type = wire::MessageType::PullRequest;
  m.tensors.push_back({"a", 1, Filled(elements, value)});
  m.tensors.push_back({"b", 2, Filled(3, value)});  // a second tensor, placed after the first
  return m;
}

class ShmTransportTest : public ShmTest {
 protected:
  // An echo server: the reply carries the request's tensors plus one; it
  // records whether the request's payload was read in place.
  void StartServer(ShmMode mode, size_t ring_bytes = size_t{1} << 20) {
    ServerOptions options;
    options.name = "echo:0";
    options.endpoint = "tcp://127.0.0.1:*";
    options.cluster_id = cluster_id_;
    server_ = std::make_unique<RpcServer>(
        context_, options,
        [this](const ReceivedMessage& request, RequestContext&) {
          request_in_place_ = InSegment(request.tensors()[0].data);
          OutgoingMessage reply;
          reply.type = wire::MessageType::PullReply;
          for (const TensorView& v : request.tensors()) {
            Tensor t = v.ToTensor();
            for (int64_t i = 0; i < t.num_elements(); ++i) t.f32()[i] += 1;
            reply.tensors.push_back({std::string(v.name), v.version, t});
          }
          return reply;
        },
        ShmOptions{mode, ring_bytes});
    ASSERT_TRUE(server_->Start().ok());
  }
  std::unique_ptr<Channel> Connect(size_t ring_bytes = size_t{1} << 20) {
    ChannelOptions options;
    options.peer_name = "echo:0";
    options.endpoint = server_->bound_endpoint();
    options.cluster_id = cluster_id_;
    options.rpc_timeout_ms = 10000;
    return std::make_unique<Channel>(context_, options, ShmOptions{ShmMode::kAuto, ring_bytes});
  }
  // A call whose reply must hold the request's values plus one.
  ReceivedMessage CallAndCheck(Channel& channel, int64_t elements, float value) {
    StatusOr<ReceivedMessage> reply = channel.Call(Request(elements, value));
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    if (!reply.ok()) return ReceivedMessage();
    EXPECT_TRUE(Holds(reply->tensors()[0], elements, value + 1));
    EXPECT_TRUE(Holds(reply->tensors()[1], 3, value + 1));
    return std::move(reply).value();
  }
  // A channel to a new kAuto server that has made two calls, the second
  // through the bells (which the caller checks: shm_bells_in_use()).
  std::unique_ptr<Channel> ConnectThroughBells() {
    StartServer(ShmMode::kAuto);
    auto channel = Connect();
    CallAndCheck(*channel, 1000, 1.0f);
    CallAndCheck(*channel, 1000, 2.0f);
    return channel;
  }

  zmq::context_t context_{1};
  std::unique_ptr<RpcServer> server_;
  std::atomic<bool> request_in_place_{false};
};

TEST_F(ShmTransportTest, TensorsGoThroughTheRingsAndAreReadInPlaceOnBothSides) {
  StartServer(ShmMode::kAuto);
  auto channel = Connect();
  // The first request offers the rings and travels over TCP.
  ReceivedMessage first = CallAndCheck(*channel, 1000, 1.0f);
  EXPECT_FALSE(request_in_place_.load());
  ASSERT_TRUE(channel->shm_attached());
  // Both ends have mapped the segments: their names are gone already.
  EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty());
  for (int i = 0; i < 20; ++i) {
    ReceivedMessage reply = CallAndCheck(*channel, 1000 + i, 2.0f + i);
    EXPECT_TRUE(request_in_place_.load()) << i;
    EXPECT_TRUE(InSegment(reply.tensors()[0].data)) << i;
  }
}

// Once the server answered through the reply bell, requests' headers go
// through the request bell: ZeroMQ carries none of them, in either
// direction, replies sent from the handler threads included.
TEST_F(ShmTransportTest, HeadersGoThroughTheBellsOnceTheServerAnsweredThroughOne) {
  StartServer(ShmMode::kAuto);
  auto channel = Connect();
  CallAndCheck(*channel, 1000, 1.0f);  // the offer, over TCP; answered by bell
  ASSERT_TRUE(channel->shm_attached());
  EXPECT_TRUE(channel->shm_bells_in_use());
  EXPECT_EQ(server_->requests_through_bells(), 0u);
  EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty()) << "the bells' names go with the segments'";
  for (int i = 0; i < 10; ++i) {
    ReceivedMessage reply = CallAndCheck(*channel, 1000 + i, 2.0f + i);
    EXPECT_TRUE(request_in_place_.load()) << i;
    EXPECT_TRUE(InSegment(reply.tensors()[0].data)) << i;
  }
  // A wait over several connections (a worker's over its ps shards) wakes
  // for the bell: it reads only the connections its poll saw ready.
  for (int i = 0; i < 10; ++i) {
    StatusOr<uint64_t> id = channel->Send(Request(1000, 5.0f + i));
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    PendingCalls calls;
    calls.Add(channel.get(), *id);
    const Status waited = calls.WaitAll(SteadyClock().Now() + std::chrono::seconds(30));
    ASSERT_TRUE(waited.ok()) << waited.ToString();
    EXPECT_TRUE(Holds(calls.replies()[0].tensors()[0], 1000, 6.0f + i));
  }
  EXPECT_EQ(server_->requests_through_bells(), 20u);
  // A payload the ring cannot hold goes over TCP, header and all, and the
  // bells carry the next one again.
  CallAndCheck(*channel, 512 << 10, 3.0f);
  EXPECT_EQ(server_->requests_through_bells(), 20u);
  CallAndCheck(*channel, 1000, 4.0f);
  EXPECT_EQ(server_->requests_through_bells(), 21u);
}

TEST_F(ShmTransportTest, APayloadLargerThanTheRingGoesOverTcp) {
  StartServer(ShmMode::kAuto, 64 << 10);
  auto channel = Connect(64 << 10);
  CallAndCheck(*channel, 100, 1.0f);
  ASSERT_TRUE(channel->shm_attached());
  ReceivedMessage large = CallAndCheck(*channel, 256 << 10, 3.0f);  // 1 MiB: over TCP
  EXPECT_FALSE(request_in_place_.load());
  EXPECT_FALSE(InSegment(large.tensors()[0].data));
  ReceivedMessage small = CallAndCheck(*channel, 100, 4.0f);  // and back
  EXPECT_TRUE(request_in_place_.load());
  EXPECT_TRUE(InSegment(small.tensors()[0].data));
}

TEST_F(ShmTransportTest, RepliesHeldFillTheRingThenTheRestGoOverTcpAndReleasingFreesIt) {
  StartServer(ShmMode::kAuto, 64 << 10);
  auto channel = Connect(64 << 10);
  CallAndCheck(*channel, 100, 1.0f);
  ASSERT_TRUE(channel->shm_attached());
  // 20 KiB replies, all held: three fit in a 64 KiB ring, the rest cannot.
  std::vector<ReceivedMessage> held;
  int in_place = 0;
  for (int i = 0; i < 6; ++i) {
    held.push_back(CallAndCheck(*channel, 5 << 10, 10.0f + i));
    in_place += InSegment(held.back().tensors()[0].data) ? 1 : 0;
  }
  EXPECT_EQ(in_place, 3);
  // Still intact while later ones came in.
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(Holds(held[i].tensors()[0], 5 << 10, 11.0f + i));
  held.clear();
  ReceivedMessage again = CallAndCheck(*channel, 5 << 10, 20.0f);
  EXPECT_TRUE(InSegment(again.tensors()[0].data));
}

TEST_F(ShmTransportTest, AServerWithSharedMemoryOffKeepsTheClientOnTcp) {
  StartServer(ShmMode::kOff);
  auto channel = Connect();
  for (int i = 0; i < 3; ++i) CallAndCheck(*channel, 1000, 1.0f + i);
  EXPECT_FALSE(request_in_place_.load());
  EXPECT_FALSE(channel->shm_attached());
  // The declined rings are gone at once.
  EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty());
}

// The descriptors this process holds on named pipes whose names end with
// `suffix` (".req.bell", ".rep.bell"). Both ends of the test's connection
// are in this process: a bell in use has two.
std::vector<int> BellFds(const std::string& suffix) {
  std::vector<int> fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.find("/dev/shm/pst-") != std::string::npos &&
        target.find(suffix) != std::string::npos) {
      fds.push_back(std::stoi(entry.path().filename().string()));
    }
  }
  return fds;
}

// Writes a record whose length no record has into the bell on `fd`.
void RingMalformed(int fd) {
  const uint32_t length = 0xffffffffu;
  ASSERT_EQ(::write(fd, &length, sizeof(length)), static_cast<ssize_t>(sizeof(length)));
}

// What follows a malformed record in a bell cannot be framed, so the side
// that finds one and the side that rings must both leave those bells: the
// client starts over with new rings and bells, and no call is lost to a
// bell nobody reads.
TEST_F(ShmTransportTest, AMalformedRequestBellRecordMakesTheClientStartOver) {
  auto channel = ConnectThroughBells();
  ASSERT_TRUE(channel->shm_bells_in_use());
  const uint64_t through_bells = server_->requests_through_bells();
  const std::vector<int> bell = BellFds(".req.bell");
  ASSERT_EQ(bell.size(), 2u);
  RingMalformed(bell[0]);
  // The server closes its end once it has detached from the request ring.
  for (int i = 0; i < 3000 && BellFds(".req.bell").size() > 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(BellFds(".req.bell").size(), 1u) << "the server kept its bell";
  for (int i = 0; i < 5; ++i) CallAndCheck(*channel, 1000, 3.0f + i);
  EXPECT_TRUE(channel->shm_attached());
  EXPECT_TRUE(channel->shm_bells_in_use()) << "new bells";
  EXPECT_GT(server_->requests_through_bells(), through_bells);
}

TEST_F(ShmTransportTest, AMalformedReplyBellRecordMakesTheClientStartOver) {
  auto channel = ConnectThroughBells();
  ASSERT_TRUE(channel->shm_bells_in_use());
  const std::vector<int> bell = BellFds(".rep.bell");
  ASSERT_EQ(bell.size(), 2u);
  RingMalformed(bell[0]);
  StatusOr<ReceivedMessage> read = channel->ReadOne();
  EXPECT_EQ(read.status().code(), Code::kDataLoss) << read.status().ToString();
  for (int i = 0; i < 5; ++i) {
    ReceivedMessage reply = CallAndCheck(*channel, 1000, 3.0f + i);
    if (i > 0) EXPECT_TRUE(InSegment(reply.tensors()[0].data)) << "new rings, " << i;
  }
  EXPECT_TRUE(channel->shm_bells_in_use()) << "new bells";
}

// The frames of a request offering `link`'s rings, as a Channel sends them.
std::vector<zmq::message_t> OfferFrames(ShmClientLink& link, uint64_t cluster_id) {
  OutgoingMessage m = Request(10, 1.0f);
  return link.Send(EncodeMessage(m, Envelope{1, cluster_id, wire::Role::Worker, 0}), 1, cluster_id);
}

TEST_F(ShmTransportTest, AServerRefusesTheRingsOfAnotherCluster) {
  const uint64_t foreign = AnotherClusterId();
  ShmClientLink link(ShmOptions{ShmMode::kAuto, 4096}, "echo:0", "tcp://127.0.0.1:1");
  std::vector<zmq::message_t> frames = OfferFrames(link, foreign);
  ASSERT_EQ(ShmEntriesOf(foreign).size(), 4u);  // two segments, two bells
  ShmServerPeers peers(ShmOptions{ShmMode::kAuto, 4096}, "ps:0");
  auto taken = peers.Incoming("route", "", &frames, cluster_id_, 1 << 20);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_FALSE(taken->has_value());  // the ref is taken off, the rest decodes as usual
  EXPECT_EQ(frames.size(), 3u);
  EXPECT_EQ(peers.num_peers(), 0u);

  // The same offer to a server of that cluster is taken.
  std::vector<zmq::message_t> again = OfferFrames(link, foreign);
  ASSERT_TRUE(peers.Incoming("route", "", &again, foreign, 1 << 20).ok());
  EXPECT_EQ(peers.num_peers(), 1u);
}

TEST_F(ShmTransportTest, TheNextStartOfAJobRemovesTheSegmentsOfAKilledTask) {
  // A task that offers its rings and is SIGKILLed before the server took
  // them: its names (two segments, two bells) stay in /dev/shm.
  ForkedChild task([&](int ready_fd) {
    ShmClientLink link(ShmOptions{ShmMode::kAuto, 4096}, "ps:0", "tcp://127.0.0.1:1");
    if (OfferFrames(link, cluster_id_).size() != 4) return 1;
    SignalReady(ready_fd);
    while (true) ::pause();
  });
  ASSERT_TRUE(task.WaitReady());
  task.Kill();
  ASSERT_EQ(ShmEntriesOf(cluster_id_).size(), 4u);
  // The next task of the job removes them before making its own.
  {
    ShmClientLink link(ShmOptions{ShmMode::kAuto, 4096}, "ps:0", "tcp://127.0.0.1:1");
    OfferFrames(link, cluster_id_);
    const std::vector<std::string> entries = ShmEntriesOf(cluster_id_);
    ASSERT_EQ(entries.size(), 4u);
    for (const std::string& entry : entries) {
      EXPECT_EQ(entry.find("-" + std::to_string(task.pid()) + "-"), std::string::npos) << entry;
    }
  }
  // And its own go with it (TearDown checks that none is left).
  EXPECT_TRUE(ShmEntriesOf(cluster_id_).empty());
}

}  // namespace
}  // namespace pst

// RunPsOn's life over an in-process transport: it serves once started,
// heartbeats its chief, stops when the chief shuts it down, and on a signal
// stops as StopPolicy says on the clock it is given. A fake chief answers
// the heartbeats; time moves by hand. No sockets, no sleeps.
#include "ps/ps_task.h"

#include <gtest/gtest.h>

#include <future>
#include <optional>

#include "common/mutex.h"
#include "ps/ps_client.h"
#include "ps/shard_admin.h"
#include "transport/in_process.h"
#include "transport/message_types.h"

namespace pst {
namespace {

using std::chrono::seconds;

constexpr uint64_t kCluster = 7;
const HostPort kChief{"127.0.0.1", 1000};
// How long a test waits for what should happen at once before it fails.
constexpr seconds kPatience{5};

// A FakeClock that says when it is read, so a test can wait until the ps has
// looked at the time.
class WatchedClock : public MonotonicClock {
 public:
  TimePoint Now() const override {
    MutexLock lock(mu_);
    ++reads_;
    read_.NotifyAll();
    return fake_.Now();
  }
  void Advance(std::chrono::nanoseconds d) { fake_.Advance(d); }
  int reads() const {
    MutexLock lock(mu_);
    return reads_;
  }
  // Waits until the clock has been read more than `reads` times in all;
  // false after kPatience.
  bool WaitForReadsBeyond(int reads) const {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    MutexLock lock(mu_);
    while (reads_ <= reads) {
      if (!read_.WaitUntil(mu_, deadline)) return reads_ > reads;
    }
    return true;
  }

 private:
  FakeClock fake_;
  mutable Mutex mu_;
  mutable CondVar read_;
  mutable int reads_ GUARDED_BY(mu_) = 0;
};

// The chief as a ps sees it: answers heartbeats and keeps the first one's
// sender.
class FakeChief {
 public:
  FakeChief(Transport& transport, const HostPort& at) {
    ServerOptions options;
    options.name = "chief";
    options.endpoint = at.Endpoint();
    options.role = wire::Role::Chief;
    server_ = transport.Listen(
        options, [this](const ReceivedMessage& r, RequestContext&) { return Answer(r); });
    EXPECT_TRUE(server_->Start().ok());
  }

  // The sender of the first heartbeat (role, index), once it has come;
  // nullopt when none came within kPatience.
  std::optional<std::pair<wire::Role, int>> FirstHeartbeat() {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    MutexLock lock(mu_);
    while (!first_heartbeat_ && beat_.WaitUntil(mu_, deadline)) {
    }
    return first_heartbeat_;
  }

 private:
  OutgoingMessage Answer(const ReceivedMessage& request) {
    if (request.type() == wire::MessageType::HeartbeatRequest) {
      MutexLock lock(mu_);
      if (!first_heartbeat_) {
        first_heartbeat_.emplace(request.header().sender_role(), request.header().sender_index());
      }
      beat_.NotifyAll();
    }
    OutgoingMessage reply;
    reply.type = ReplyTypeOf(request.type());
    return reply;
  }

  Mutex mu_;
  CondVar beat_;
  std::optional<std::pair<wire::Role, int>> first_heartbeat_ GUARDED_BY(mu_);
  std::unique_ptr<Server> server_;  // last: stopped before the members it uses go
};

class PsTaskTest : public ::testing::Test {
 protected:
  PsTaskTest() {
    options_.cluster.chief = kChief;
    options_.cluster.ps = {{"127.0.0.1", 2000}};
    options_.heartbeat_interval = std::chrono::hours(1);  // only the first, sent at once
    options_.stop.chief_silence = seconds(3);
    options_.stop.grace = seconds(2);
    site_.endpoint = options_.cluster.ps[0].Endpoint();
    site_.chief_addresses = {"127.0.0.1"};  // every in-process peer's address
  }
  ~PsTaskTest() override {
    if (!running_.valid() || Returned(seconds(0))) return;
    // Every way to stop it, so that a broken one fails a test instead of
    // hanging it.
    (void)ShardAdmin(&*Client(wire::Role::Chief)).Shutdown(0, Deadline());
    stop_.graceful.store(true);
    stop_.now.store(true);
    if (!Returned(kPatience)) LOG(FATAL) << "RunPsOn does not stop";
  }

  // Starts the ps on a thread; returns once it serves (its first heartbeat
  // is sent after it has started serving).
  void StartPs() {
    stop_.check_every = std::chrono::milliseconds(2);
    running_ = std::async(std::launch::async,
                          [this] { return RunPsOn(options_, transport_, site_, clock_, stop_); });
    const auto heartbeat = chief_.FirstHeartbeat();
    ASSERT_TRUE(heartbeat.has_value()) << "the ps sent the chief no heartbeat";
  }
  // Whether RunPsOn has returned (OK) within `patience`.
  bool Returned(std::chrono::milliseconds patience) {
    if (running_.wait_for(patience) != std::future_status::ready) return false;
    const Status status = running_.get();
    EXPECT_TRUE(status.ok()) << status.ToString();
    return true;
  }
  std::unique_ptr<PsClient> Client(wire::Role role) {
    ClientIdentity identity;
    identity.role = role;
    identity.cluster_id = kCluster;
    identity.rpc_timeout_ms = 2000;
    return std::make_unique<PsClient>(transport_, options_.cluster, placement_, identity);
  }
  MonotonicClock::TimePoint Deadline() { return SteadyClock().Now() + kPatience; }
  // The chief initializes the shard: w = {1, 2, 3}.
  void InitByChief() {
    Tensor w(DType::kFloat32, {3});
    for (int i = 0; i < 3; ++i) w.f32()[i] = static_cast<float>(i + 1);
    ASSERT_TRUE(ShardAdmin(&*Client(wire::Role::Chief)).Initialize(ShardConfig(), {w}).ok());
  }

  PsOptions options_;
  PsSite site_;
  const Placement placement_ =
      Placement::Compute({{"w", DType::kFloat32, {3}}}, PlacementOptions()).value();
  InProcessTransport transport_;
  FakeChief chief_{transport_, kChief};
  WatchedClock clock_;
  PsStopRequests stop_;
  std::future<Status> running_;  // last: joined first
};

TEST_F(PsTaskTest, HeartbeatsTheChiefAsItsPs) {
  StartPs();
  const auto heartbeat = chief_.FirstHeartbeat();
  ASSERT_TRUE(heartbeat.has_value());
  EXPECT_EQ(heartbeat->first, wire::Role::Ps);
  EXPECT_EQ(heartbeat->second, 0);
}

TEST_F(PsTaskTest, ServesPullsOnceTheChiefInitializedIt) {
  StartPs();
  InitByChief();
  std::vector<Tensor> values;
  const Status pulled = Client(wire::Role::Worker)->Pull({0}, &values);
  ASSERT_TRUE(pulled.ok()) << pulled.ToString();
  EXPECT_EQ(std::vector<float>(values[0].f32(), values[0].f32() + 3),
            std::vector<float>({1, 2, 3}));
}

TEST_F(PsTaskTest, StopsWhenTheChiefShutsItDown) {
  StartPs();
  const Status shutdown = ShardAdmin(&*Client(wire::Role::Chief)).Shutdown(0, Deadline());
  ASSERT_TRUE(shutdown.ok()) << shutdown.ToString();
  EXPECT_TRUE(Returned(kPatience));
}

TEST_F(PsTaskTest, OnlyTheChiefsHostMayShutItDown) {
  site_.chief_addresses = {"10.0.0.9"};
  StartPs();
  EXPECT_EQ(ShardAdmin(&*Client(wire::Role::Chief)).Shutdown(0, Deadline()).code(),
            Code::kPermissionDenied);
  EXPECT_FALSE(Returned(std::chrono::milliseconds(0)));
}

// --lr_schedule=plateau's lowerings change how the shard trains: the
// chief's are applied, a worker's refused.
TEST_F(PsTaskTest, OnlyTheChiefMaySetTheLearningRatesLowerings) {
  StartPs();
  ShardConfig plateau;
  plateau.lr_schedule = "plateau";
  plateau.lr_decay_rate = 0.5f;
  ASSERT_TRUE(ShardAdmin(&*Client(wire::Role::Chief))
                  .Initialize(plateau, {Tensor(DType::kFloat32, {3})})
                  .ok());
  const Status refused = ShardAdmin(&*Client(wire::Role::Worker)).SetLrLowerings(2, Deadline());
  EXPECT_EQ(refused.code(), Code::kPermissionDenied) << refused.ToString();
  const auto lowerings = [this] {
    StatusOr<ShardStatus> status =
        ShardAdmin(&*Client(wire::Role::Worker)).GetShardStatus(0, Deadline());
    EXPECT_TRUE(status.ok()) << status.status().ToString();
    return status.ok() ? status->store.lr_lowerings : -1;
  };
  EXPECT_EQ(lowerings(), 0);
  const Status applied = ShardAdmin(&*Client(wire::Role::Chief)).SetLrLowerings(2, Deadline());
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  EXPECT_EQ(lowerings(), 2);
}

TEST_F(PsTaskTest, ASignalStopsItAtOnceWhenTheChiefNeverSpoke) {
  StartPs();
  stop_.graceful.store(true);
  EXPECT_TRUE(Returned(kPatience));
}

TEST_F(PsTaskTest, ASignalStopsItAtOnceWhenTheChiefFellSilent) {
  StartPs();
  InitByChief();
  clock_.Advance(options_.stop.chief_silence);
  stop_.graceful.store(true);
  EXPECT_TRUE(Returned(kPatience));
}

TEST_F(PsTaskTest, ASignalledPsServesItsChiefUntilTheGracePasses) {
  StartPs();
  InitByChief();  // the chief's contact, at the clock's time 0
  const int reads = clock_.reads();
  stop_.graceful.store(true);
  // A second look at the time: the first decided to keep serving.
  ASSERT_TRUE(clock_.WaitForReadsBeyond(reads + 1));
  EXPECT_FALSE(Returned(std::chrono::milliseconds(0)));
  clock_.Advance(options_.stop.grace);  // the chief still within chief_silence
  EXPECT_TRUE(Returned(kPatience));
}

TEST_F(PsTaskTest, ASecondSignalStopsItAtOnceWhileTheChiefIsInTouch) {
  StartPs();
  InitByChief();
  stop_.graceful.store(true);
  stop_.now.store(true);
  EXPECT_TRUE(Returned(kPatience));
}

}  // namespace
}  // namespace pst

// SocketWaiter and WaitForMessages on real ZeroMQ sockets (inproc pairs,
// whose descriptors behave as a TCP socket's do).
#include "transport/socket_wait.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace pst {
namespace {

using std::chrono::milliseconds;

// Long enough never to run out on a loaded machine: a wait that should end
// on a message and does not fails the test after this.
constexpr milliseconds kForever{30000};

// A pipe standing in for a connection's bell: readable once rung.
class PipeBell {
 public:
  PipeBell() { EXPECT_EQ(::pipe(fds_), 0); }
  ~PipeBell() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int fd() const { return fds_[0]; }
  // Rings it from another thread after 20 ms; join the thread returned.
  std::thread RingLater() {
    return std::thread([this] {
      std::this_thread::sleep_for(milliseconds(20));
      EXPECT_EQ(::write(fds_[1], "x", 1), 1);
    });
  }

 private:
  int fds_[2] = {-1, -1};
};

class SocketWaitTest : public ::testing::Test {
 protected:
  // Two connected pairs: senders_[i] -> receivers_[i].
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      const std::string endpoint = "inproc://socket-wait-" + std::to_string(i);
      receivers_[i].bind(endpoint);
      senders_[i].connect(endpoint);
    }
  }
  void Send(int i, const std::string& text) {
    ASSERT_TRUE(senders_[i].send(zmq::buffer(text), zmq::send_flags::none));
  }
  // Reads receiver i until it has nothing; returns what it read.
  std::string Drain(int i) {
    std::string read;
    zmq::message_t message;
    while (receivers_[i].recv(message, zmq::recv_flags::dontwait)) read += message.to_string();
    return read;
  }
  // Takes both marks and reads both sockets until they have nothing, as
  // the waiter's user does.
  void LookAtBoth(SocketWaiter& waiter) {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(waiter.TakeLook(i));
      Drain(i);
    }
  }
  // Whether receiver i's descriptor fires now.
  bool DescriptorFires(int i) {
    pollfd fd{receivers_[i].get(zmq::sockopt::fd), POLLIN, 0};
    return ::poll(&fd, 1, 0) > 0;
  }

  zmq::context_t context_{1};
  zmq::socket_t receivers_[2] = {{context_, zmq::socket_type::pair},
                                 {context_, zmq::socket_type::pair}};
  zmq::socket_t senders_[2] = {{context_, zmq::socket_type::pair},
                               {context_, zmq::socket_type::pair}};
};

// The hazard both guard against: once the socket has taken the commands
// that announced a message (here by HasMessage; a send does it too), its
// descriptor stays quiet although the message waits.
TEST_F(SocketWaitTest, AMessageWhoseSignalWasTakenIsStillFound) {
  Send(0, "early");
  ASSERT_TRUE(HasMessage(receivers_[0]));
  ASSERT_FALSE(DescriptorFires(0));
  const std::vector<bool> ready = WaitForMessages({&receivers_[0]}, {-1}, {true}, kForever);
  EXPECT_TRUE(ready[0]);
  EXPECT_EQ(Drain(0), "early");
}

TEST_F(SocketWaitTest, WaitForMessagesWakesWhenOneArrives) {
  std::thread sender([this] {
    std::this_thread::sleep_for(milliseconds(20));
    Send(1, "late");
  });
  const std::vector<bool> ready =
      WaitForMessages({&receivers_[0], &receivers_[1]}, {-1, -1}, {true, true}, kForever);
  sender.join();
  EXPECT_FALSE(ready[0]);
  EXPECT_TRUE(ready[1]);
  EXPECT_EQ(Drain(1), "late");
}

TEST_F(SocketWaitTest, WaitForMessagesIgnoresSocketsNotWantedAndTimesOut) {
  Send(0, "unwanted");
  const std::vector<bool> ready =
      WaitForMessages({&receivers_[0], &receivers_[1]}, {-1, -1}, {false, true}, milliseconds(10));
  EXPECT_FALSE(ready[0]);
  EXPECT_FALSE(ready[1]);
}

// A connection's bell (a pipe here) makes it ready as its socket would, and
// only when wanted.
TEST_F(SocketWaitTest, WaitForMessagesWakesForABell) {
  PipeBell bell;
  EXPECT_FALSE(WaitForMessages({&receivers_[0], &receivers_[1]}, {-1, bell.fd()}, {true, false},
                               milliseconds(10))[0]);
  std::thread ringer = bell.RingLater();
  const std::vector<bool> ready =
      WaitForMessages({&receivers_[0], &receivers_[1]}, {-1, bell.fd()}, {true, true}, kForever);
  ringer.join();
  EXPECT_FALSE(ready[0]);
  EXPECT_TRUE(ready[1]);
  const std::vector<bool> unwanted = WaitForMessages(
      {&receivers_[0], &receivers_[1]}, {-1, bell.fd()}, {true, false}, milliseconds(10));
  EXPECT_FALSE(unwanted[1]) << "a bell of a connection not wanted";
}

TEST_F(SocketWaitTest, WaiterLooksAtEverySocketFirst) {
  SocketWaiter waiter({&receivers_[0], &receivers_[1]});
  EXPECT_TRUE(waiter.Wait({true, true}, kForever));
  EXPECT_TRUE(waiter.TakeLook(0));
  EXPECT_TRUE(waiter.TakeLook(1));
  EXPECT_FALSE(waiter.TakeLook(0));
}

TEST_F(SocketWaitTest, WaiterSleepsUntilADescriptorFires) {
  SocketWaiter waiter({&receivers_[0], &receivers_[1]});
  LookAtBoth(waiter);
  EXPECT_FALSE(waiter.Wait({true, true}, milliseconds(10)));  // nothing came
  std::thread sender([this] {
    std::this_thread::sleep_for(milliseconds(20));
    Send(1, "late");
  });
  EXPECT_TRUE(waiter.Wait({true, true}, kForever));
  sender.join();
  EXPECT_FALSE(waiter.TakeLook(0));
  EXPECT_TRUE(waiter.TakeLook(1));
  EXPECT_EQ(Drain(1), "late");
}

// After its owner used a socket (a send may take the commands announcing a
// new message), Touched makes the next Wait return at once.
TEST_F(SocketWaitTest, ATouchedSocketIsLookedAtBeforeSleeping) {
  SocketWaiter waiter({&receivers_[0], &receivers_[1]});
  LookAtBoth(waiter);
  Send(0, "announced");
  ASSERT_TRUE(HasMessage(receivers_[0]));  // takes the announcement
  ASSERT_FALSE(DescriptorFires(0));
  waiter.Touched(0);
  EXPECT_TRUE(waiter.Wait({true, true}, kForever));
  EXPECT_TRUE(waiter.TakeLook(0));
  EXPECT_EQ(Drain(0), "announced");
}

// A socket that is marked again and again (a busy router) must not keep
// the others from being read.
TEST_F(SocketWaitTest, AFiredSocketIsSeenWhileAnotherIsMarked) {
  SocketWaiter waiter({&receivers_[0], &receivers_[1]});
  LookAtBoth(waiter);
  Send(1, "reply");
  waiter.Touched(0);
  EXPECT_TRUE(waiter.Wait({true, true}, kForever));
  EXPECT_TRUE(waiter.TakeLook(0));
  EXPECT_TRUE(waiter.TakeLook(1));
  EXPECT_EQ(Drain(1), "reply");
}

TEST_F(SocketWaitTest, WaiterWakesForAnotherDescriptorAndSaysWhichFired) {
  SocketWaiter waiter({&receivers_[0], &receivers_[1]});
  LookAtBoth(waiter);
  PipeBell bell;
  std::vector<pollfd> also = {{bell.fd(), POLLIN, 0}};
  EXPECT_FALSE(waiter.Wait({true, true}, milliseconds(10), &also));
  EXPECT_EQ(also[0].revents, 0);
  std::thread ringer = bell.RingLater();
  EXPECT_TRUE(waiter.Wait({true, true}, kForever, &also));
  ringer.join();
  EXPECT_NE(also[0].revents & POLLIN, 0);
  EXPECT_FALSE(waiter.TakeLook(0));
  EXPECT_FALSE(waiter.TakeLook(1));
  // Polled even while a socket is marked, without sleeping.
  waiter.Touched(0);
  also[0].revents = 0;
  EXPECT_TRUE(waiter.Wait({true, true}, kForever, &also));
  EXPECT_NE(also[0].revents & POLLIN, 0);
}

TEST_F(SocketWaitTest, AMarkOnASocketNotWantedIsKept) {
  SocketWaiter waiter({&receivers_[0], &receivers_[1]});
  waiter.TakeLook(1);
  Drain(1);
  EXPECT_FALSE(waiter.Wait({false, true}, milliseconds(10)));
  EXPECT_TRUE(waiter.TakeLook(0));
}

}  // namespace
}  // namespace pst

#include "bench/transport/bare_zmq.h"

#include <glog/logging.h>

#include <cstring>

namespace pst {
namespace {

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

}  // namespace

BareServer::BareServer(const std::vector<size_t>& sizes)
    : sizes_(sizes), context_(1), router_(context_, zmq::socket_type::router) {
  for (size_t bytes : sizes_) buffers_.push_back(FilledBuffer(bytes, 0x3c));
  router_.set(zmq::sockopt::linger, 0);
  router_.bind("tcp://127.0.0.1:*");
  endpoint_ = router_.get(zmq::sockopt::last_endpoint);
  thread_ = std::thread([this] { Loop(); });
}

BareServer::~BareServer() { thread_.join(); }

void BareServer::Loop() {
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

BareClient::BareClient(const std::string& endpoint, const std::vector<size_t>& sizes)
    : sizes_(sizes), context_(1), dealer_(context_, zmq::socket_type::dealer) {
  for (size_t bytes : sizes_) buffers_.push_back(FilledBuffer(bytes, 0x5a));
  dealer_.set(zmq::sockopt::linger, 0);
  dealer_.connect(endpoint);
}

void BareClient::Pull(uint32_t index) {
  const BareControl c{kBarePull, index};
  dealer_.send(zmq::buffer(&c, sizeof c), zmq::send_flags::none);
  zmq::message_t reply;
  CHECK(dealer_.recv(reply));
  CHECK_EQ(reply.size(), sizes_[index]);
}

void BareClient::Push(uint32_t index) {
  const BareControl c{kBarePush, index};
  dealer_.send(zmq::buffer(&c, sizeof c), zmq::send_flags::sndmore);
  zmq::message_t payload(buffers_[index].get(), sizes_[index], NoFree, nullptr);
  dealer_.send(payload, zmq::send_flags::none);
  zmq::message_t ack;
  CHECK(dealer_.recv(ack));
  CHECK_EQ(ack.size(), sizeof c);
}

void BareClient::Stop() {
  const BareControl c{kBareStop, 0};
  dealer_.send(zmq::buffer(&c, sizeof c), zmq::send_flags::none);
  zmq::message_t ack;
  CHECK(dealer_.recv(ack));
}

}  // namespace pst

#include "transport/zap_authenticator.h"

#include <glog/logging.h>

#include <vector>

namespace pst {

ZapAuthenticator::ZapAuthenticator(zmq::context_t& context, const CurveKeys& cluster_keys)
    : allowed_key_(32, '\0') {
  CHECK(zmq_z85_decode(reinterpret_cast<uint8_t*>(allowed_key_.data()),
                       cluster_keys.public_key.c_str()) != nullptr)
      << "bad Z85 public key";
  // Bound here so it exists before any server binds; used only by the thread.
  auto socket = std::make_shared<zmq::socket_t>(context, zmq::socket_type::rep);
  socket->set(zmq::sockopt::linger, 0);
  socket->bind("inproc://zeromq.zap.01");
  thread_ = std::thread([this, socket] { Serve(*socket); });
}

ZapAuthenticator::~ZapAuthenticator() {
  stop_.store(true);
  thread_.join();
}

void ZapAuthenticator::Serve(zmq::socket_t& socket) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  while (!stop_.load()) {
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    // version, request id, domain, address, identity, mechanism, credentials...
    std::vector<zmq::message_t> request;
    zmq::message_t frame;
    do {
      if (!socket.recv(frame)) break;
      request.push_back(std::move(frame));
    } while (request.back().more());
    if (request.size() < 6) continue;
    const bool allowed = request.size() >= 7 && request[5].to_string() == "CURVE" &&
                         request[6].to_string() == allowed_key_;
    if (!allowed) {
      LOG(WARNING) << "refused a " << request[5].to_string() << " client from "
                   << request[3].to_string() << ": not the cluster's key";
    }
    const std::string reply[] = {"1.0",
                                 request[1].to_string(),
                                 allowed ? "200" : "400",
                                 allowed ? "OK" : "not the cluster's key",
                                 "",
                                 ""};
    for (size_t i = 0; i < 6; ++i) {
      socket.send(zmq::buffer(reply[i]), i < 5 ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
  }
}

}  // namespace pst

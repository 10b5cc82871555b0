// Bare ZeroMQ: the least a pull/push exchange needs, the baseline the
// framework's rounds are measured against. A ROUTER thread answers a DEALER:
// "pull" = 8 B request -> payload, "push" = 8 B + payload -> 8 B. Payload
// frames are sent zero-copy from pre-allocated buffers and never touched.
#ifndef PST_BENCH_TRANSPORT_BARE_ZMQ_H_
#define PST_BENCH_TRANSPORT_BARE_ZMQ_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

namespace pst {

// The ROUTER thread, on 127.0.0.1 at a port the OS picks; one payload
// buffer per size.
class BareServer {
 public:
  explicit BareServer(const std::vector<size_t>& sizes);
  ~BareServer();  // waits for the client's Stop()
  const std::string& endpoint() const { return endpoint_; }

 private:
  void Loop();

  const std::vector<size_t> sizes_;
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  zmq::context_t context_;
  zmq::socket_t router_;  // used by thread_ only once it runs
  std::string endpoint_;
  std::thread thread_;
};

// The DEALER, with its own context; `index` picks one of the sizes.
class BareClient {
 public:
  BareClient(const std::string& endpoint, const std::vector<size_t>& sizes);

  void Pull(uint32_t index);
  void Push(uint32_t index);
  // Ends the server's thread.
  void Stop();

 private:
  const std::vector<size_t> sizes_;
  std::vector<std::unique_ptr<uint8_t[]>> buffers_;
  zmq::context_t context_;
  zmq::socket_t dealer_;
};

}  // namespace pst

#endif  // PST_BENCH_TRANSPORT_BARE_ZMQ_H_

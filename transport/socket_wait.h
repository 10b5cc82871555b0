// Waiting on ZeroMQ sockets with fewer system calls than zmq::poll.
//
// Each ZeroMQ socket has a descriptor (ZMQ_FD) that turns readable when
// commands wait in the socket's mailbox (a message arrived, a peer came or
// went) and stays readable until the socket processes them. A socket
// processes them in any recv or send, and when asked for its ZMQ_EVENTS;
// each such look costs ZeroMQ a getpid and a poll system call. zmq::poll
// looks at every socket before sleeping, sleeps, then looks at every socket
// again, and does it twice when the first pass finds nothing: on a ps
// serving 4 KiB pulls that was 11 polls and 11 getpids per request, against
// 3 of each for a thread that reads one socket. SocketWaiter looks at a
// socket only when its descriptor fired or the caller used it since.
//
// Thread safety: none; the sockets' owner thread uses it.
#ifndef PST_TRANSPORT_SOCKET_WAIT_H_
#define PST_TRANSPORT_SOCKET_WAIT_H_

#include <poll.h>

#include <chrono>
#include <vector>
#include <zmq.hpp>

namespace pst {

// Whether `socket` holds a message to read now (ZMQ_EVENTS).
bool HasMessage(zmq::socket_t& socket);

class SocketWaiter {
 public:
  // The sockets must outlive the waiter. Every socket starts "to look at".
  explicit SocketWaiter(const std::vector<zmq::socket_t*>& sockets);

  // The caller must look at socket i (read it until it has nothing, or ask
  // HasMessage) before the next Wait sleeps: after a send on it, or after a
  // recv that did not end on "nothing more", since either may have taken
  // the commands that announced a new message without its descriptor
  // firing again.
  void Touched(size_t i) { to_look_at_[i] = true; }
  // Whether socket i is to be looked at; clears the mark (the caller now
  // reads it until it has nothing).
  bool TakeLook(size_t i);

  // Marks the wanted sockets whose descriptors fired. Sleeps for that
  // until one fires or `timeout` passes, unless a wanted socket is marked
  // already; true when one is marked now or an `also` descriptor fired,
  // false on timeout. Sockets not wanted are left alone, their marks kept.
  // `also` (may be null): more descriptors to wait on, their revents set.
  bool Wait(const std::vector<bool>& wanted, std::chrono::milliseconds timeout,
            std::vector<pollfd>* also = nullptr);

 private:
  std::vector<pollfd> fds_;
  std::vector<bool> to_look_at_;
  std::vector<pollfd> waiting_;  // scratch: the wanted sockets' fds
  std::vector<size_t> waiting_index_;
};

// zmq::poll for messages on `sockets`, with one look at each socket fewer:
// asks each wanted socket whether it has a message, and if none has,
// sleeps on their descriptors and asks again those that fired, until one
// has or `timeout` passes. bells[i] (-1: none) is another descriptor of
// socket i's connection, readable when a message waits there. ready[i]:
// socket i has a message, or bells[i] is readable.
std::vector<bool> WaitForMessages(const std::vector<zmq::socket_t*>& sockets,
                                  const std::vector<int>& bells, const std::vector<bool>& wanted,
                                  std::chrono::milliseconds timeout);

}  // namespace pst

#endif  // PST_TRANSPORT_SOCKET_WAIT_H_

// CURVE security for the cluster's sockets (ZeroMQ's CurveZMQ: encryption
// and authentication).
//
// The cluster has one key pair, made by scripts/gen_keys.sh into
// <dir>/cluster.key and given to every task with --curve_keys_dir. Servers
// use its secret key and accept only clients that present its public key
// (checked by a ZapAuthenticator); clients use the pair and expect the
// servers' public key. A peer without the cluster's secret key therefore
// cannot complete the handshake: it cannot connect, pull or push.
#ifndef PST_TRANSPORT_CURVE_H_
#define PST_TRANSPORT_CURVE_H_

#include <string>
#include <zmq.hpp>

#include "common/status.h"

namespace pst {

struct CurveKeys {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
};

inline constexpr char kCurveKeyFile[] = "cluster.key";

// A fresh key pair (zmq_curve_keypair).
StatusOr<CurveKeys> NewCurveKeys();
// <dir>/cluster.key, written with mode 0600.
Status SaveCurveKeys(const std::string& dir, const CurveKeys& keys);
// NotFound / InvalidArgument naming the file when missing or malformed.
StatusOr<CurveKeys> LoadCurveKeys(const std::string& dir);

// Socket options, to be set before bind/connect.
void MakeCurveServer(zmq::socket_t& socket, const CurveKeys& keys);
void MakeCurveClient(zmq::socket_t& socket, const CurveKeys& keys);

}  // namespace pst

#endif  // PST_TRANSPORT_CURVE_H_

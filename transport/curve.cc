#include "transport/curve.h"

#include <sys/stat.h>

#include <fstream>

#include "common/atomic_file.h"

namespace pst {

StatusOr<CurveKeys> NewCurveKeys() {
  char public_key[41], secret_key[41];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return FailedPrecondition("this libzmq has no CURVE support (zmq_curve_keypair failed)");
  }
  return CurveKeys{public_key, secret_key};
}

Status SaveCurveKeys(const std::string& dir, const CurveKeys& keys) {
  const std::string path = dir + "/" + kCurveKeyFile;
  PST_RETURN_IF_ERROR(WriteFileAtomically(
      path, "public " + keys.public_key + "\nsecret " + keys.secret_key + "\n"));
  if (::chmod(path.c_str(), 0600) != 0) return Unavailable("chmod 0600 " + path + " failed");
  return Status::OK();
}

StatusOr<CurveKeys> LoadCurveKeys(const std::string& dir) {
  const std::string path = dir + "/" + kCurveKeyFile;
  std::ifstream in(path);
  if (!in) {
    return NotFound("no " + path + ": make the cluster's keys with scripts/gen_keys.sh " + dir);
  }
  CurveKeys keys;
  std::string public_word, secret_word;
  in >> public_word >> keys.public_key >> secret_word >> keys.secret_key;
  if (public_word != "public" || secret_word != "secret" || keys.public_key.size() != 40 ||
      keys.secret_key.size() != 40) {
    return InvalidArgument(path + " is not a key file written by scripts/gen_keys.sh");
  }
  return keys;
}

void MakeCurveServer(zmq::socket_t& socket, const CurveKeys& keys) {
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, keys.secret_key);
  // Sends clients to the ZAP handler (ZapAuthenticator) of this context.
  socket.set(zmq::sockopt::zap_domain, "pstrain");
}

void MakeCurveClient(zmq::socket_t& socket, const CurveKeys& keys) {
  socket.set(zmq::sockopt::curve_serverkey, keys.public_key);
  socket.set(zmq::sockopt::curve_publickey, keys.public_key);
  socket.set(zmq::sockopt::curve_secretkey, keys.secret_key);
}

}  // namespace pst

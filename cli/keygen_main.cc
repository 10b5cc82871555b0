// pst_keygen DIR: writes a new cluster CURVE key pair to DIR/cluster.key.
#include <cstdio>
#include <filesystem>

#include "transport/curve.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pst_keygen DIR\n");
    return 2;
  }
  std::error_code error;
  std::filesystem::create_directories(argv[1], error);
  auto keys = pst::NewCurveKeys();
  pst::Status status = keys.ok() ? pst::SaveCurveKeys(argv[1], *keys) : keys.status();
  if (!status.ok()) {
    std::fprintf(stderr, "pst_keygen: %s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s/%s\n", argv[1], pst::kCurveKeyFile);
  return 0;
}

// pst_keygen DIR: writes a new cluster CURVE key pair to DIR/cluster.key.
#include <cstdio>
#include <filesystem>

#include "cli/help_request.h"
#include "cli/version.h"
#include "transport/curve.h"

namespace {

constexpr char kUsage[] =
    "usage: pst_keygen DIR\n"
    "Writes a new CURVE key pair for a cluster to DIR/cluster.key (mode 0600).\n"
    "Copy DIR to every host and start every task with --curve_keys_dir=DIR.\n";

}  // namespace

int main(int argc, char** argv) {
  switch (pst::FindHelpRequest(argc, argv)) {
    case pst::HelpRequest::kNone: break;
    case pst::HelpRequest::kHelp:
    case pst::HelpRequest::kHelpFull: std::fputs(kUsage, stdout); return 0;
    case pst::HelpRequest::kVersion:
      std::printf("%s\n", pst::VersionLine("pst_keygen").c_str());
      return 0;
  }
  if (argc != 2) {
    std::fputs(kUsage, stderr);
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

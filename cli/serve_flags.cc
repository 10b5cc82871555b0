#include "cli/serve_flags.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include "cli/help_request.h"
#include "cli/version.h"

// The served model.
DEFINE_string(export_dir, "",
              "The chief's export folder (--export_every_secs): serve its newest model and follow "
              "it, swapping each new export in whole");
DEFINE_string(model_file, "", "Instead of --export_dir: serve this model.bin, never reloaded");
DEFINE_int32(reload_every_ms, 1000, "With --export_dir: look for a newer export this often");
// HTTP.
DEFINE_string(host, "127.0.0.1", "The address to listen on; * for every interface");
DEFINE_int32(port, 8500, "The port to listen on; 0: one the OS picks (logged)");
DEFINE_int32(threads, 0, "HTTP threads, each serving many connections (0: one per CPU)");
DEFINE_int32(max_connections, 10000, "Connections open at once; more are refused");
DEFINE_int64(max_request_bytes, int64_t{16} << 20,
             "A request body larger than this is answered 413, unread");

namespace google {
// gflags' exit hook (exported by libgflags): lets flag errors exit with 2.
extern void (*gflags_exitfunc)(int);
}  // namespace google

namespace pst {
namespace {

constexpr int kFlagErrorExitCode = 2;
constexpr size_t kLineWidth = 80;
constexpr char kIndent[] = "      ";

// The groups --help shows, in order.
struct Group {
  const char* title;
  std::vector<std::string> flags;
};
const std::vector<Group>& Groups() {
  static const auto* groups = new std::vector<Group>{
      {"Served model", {"export_dir", "model_file", "reload_every_ms"}},
      {"HTTP server", {"host", "port", "threads", "max_connections", "max_request_bytes"}},
  };
  return *groups;
}

// `text` wrapped at kLineWidth under kIndent (as cli/help.cc writes the
// other programs' flags, so that scripts/gen_flags_doc.sh reads them alike).
void AppendWrapped(const std::string& text, std::string* out) {
  std::istringstream words(text);
  std::string line;
  for (std::string word; words >> word;) {
    if (!line.empty() && sizeof(kIndent) - 1 + line.size() + 1 + word.size() > kLineWidth) {
      *out += kIndent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) *out += kIndent + line + "\n";
}

[[noreturn]] void ExitForFlags(int code) { std::exit(code == 0 ? 0 : kFlagErrorExitCode); }

Status Positive(const char* name, int64_t value) {
  if (value > 0) return Status::OK();
  return InvalidArgument("--" + std::string(name) + "=" + std::to_string(value) +
                         " must be positive");
}

}  // namespace

std::string ServeHelp(const std::string& usage) {
  std::string out = "usage: " + usage + "\n";
  for (const Group& group : Groups()) {
    out += std::string("\n") + group.title + ":\n";
    for (const std::string& name : group.flags) {
      gflags::CommandLineFlagInfo flag;
      CHECK(gflags::GetCommandLineFlagInfo(name.c_str(), &flag)) << name;
      const std::string value =
          flag.type == "string" ? "\"" + flag.default_value + "\"" : flag.default_value;
      out += "  --" + flag.name + "=" + value + "\n";
      AppendWrapped(flag.description, &out);
    }
  }
  return out;
}

void InitServe(int* argc, char*** argv, const char* usage) {
  switch (FindHelpRequest(*argc, *argv)) {
    case HelpRequest::kNone: break;
    case HelpRequest::kHelp:
    case HelpRequest::kHelpFull: std::cout << ServeHelp(usage) << std::flush; std::exit(0);
    case HelpRequest::kVersion: std::cout << VersionLine("serve") << std::endl; std::exit(0);
  }
  google::gflags_exitfunc = &ExitForFlags;
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

StatusOr<ServeOptions> ServeOptionsFromFlags() {
  ServeOptions o;
  if (FLAGS_export_dir.empty() == FLAGS_model_file.empty()) {
    return InvalidArgument(
        "give --export_dir=DIR (the chief's export folder) or --model_file=FILE, one of them");
  }
  o.export_dir = FLAGS_export_dir;
  o.model_file = FLAGS_model_file;
  PST_RETURN_IF_ERROR(Positive("reload_every_ms", FLAGS_reload_every_ms));
  o.reload_every = std::chrono::milliseconds(FLAGS_reload_every_ms);
  if (FLAGS_port < 0 || FLAGS_port > 65535) {
    return InvalidArgument("--port=" + std::to_string(FLAGS_port) + " is not in [0, 65535]");
  }
  if (FLAGS_threads < 0) {
    return InvalidArgument("--threads=" + std::to_string(FLAGS_threads) + " is negative");
  }
  PST_RETURN_IF_ERROR(Positive("max_connections", FLAGS_max_connections));
  PST_RETURN_IF_ERROR(Positive("max_request_bytes", FLAGS_max_request_bytes));
  o.http.host = FLAGS_host;
  o.http.port = FLAGS_port;
  o.http.threads =
      FLAGS_threads > 0 ? FLAGS_threads : std::max(1, int(std::thread::hardware_concurrency()));
  o.http.connection_limit = static_cast<unsigned>(FLAGS_max_connections);
  o.http.max_request_bytes = static_cast<size_t>(FLAGS_max_request_bytes);
  return o;
}

}  // namespace pst

#include "cli/serve_flags.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <string>

namespace pst {
namespace {

TEST(ServeFlagsTest, ExportDirAndTheHttpFlags) {
  gflags::FlagSaver saver;
  gflags::SetCommandLineOption("export_dir", "/run/export");
  gflags::SetCommandLineOption("reload_every_ms", "250");
  gflags::SetCommandLineOption("host", "*");
  gflags::SetCommandLineOption("port", "0");
  gflags::SetCommandLineOption("threads", "3");
  gflags::SetCommandLineOption("max_request_bytes", "1000");
  const StatusOr<ServeOptions> options = ServeOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->export_dir, "/run/export");
  EXPECT_EQ(options->model_file, "");
  EXPECT_EQ(options->reload_every.count(), 250);
  EXPECT_EQ(options->http.host, "*");
  EXPECT_EQ(options->http.port, 0);
  EXPECT_EQ(options->http.threads, 3);
  EXPECT_EQ(options->http.connection_limit, 10000u);
  EXPECT_EQ(options->http.max_request_bytes, 1000u);
}

TEST(ServeFlagsTest, ThreadsDefaultToOnePerCpu) {
  gflags::FlagSaver saver;
  gflags::SetCommandLineOption("model_file", "model.bin");
  const StatusOr<ServeOptions> options = ServeOptionsFromFlags();
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_GE(options->http.threads, 1);
  EXPECT_EQ(options->http.port, 8500);
}

TEST(ServeFlagsTest, BadFlagsAreNamed) {
  auto error = [](const char* name, const char* value) {
    gflags::FlagSaver saver;
    gflags::SetCommandLineOption("model_file", "model.bin");
    gflags::SetCommandLineOption(name, value);
    const Status status = ServeOptionsFromFlags().status();
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << name;
    return status.message();
  };
  EXPECT_NE(error("export_dir", "/x").find("--export_dir=DIR"), std::string::npos);
  EXPECT_EQ(error("port", "70000"), "--port=70000 is not in [0, 65535]");
  EXPECT_EQ(error("reload_every_ms", "0"), "--reload_every_ms=0 must be positive");
  EXPECT_EQ(error("threads", "-1"), "--threads=-1 is negative");
  EXPECT_EQ(error("max_connections", "0"), "--max_connections=0 must be positive");
  EXPECT_EQ(error("max_request_bytes", "-5"), "--max_request_bytes=-5 must be positive");
  gflags::FlagSaver saver;
  EXPECT_NE(ServeOptionsFromFlags().status().message().find("--model_file=FILE"),
            std::string::npos);
}

TEST(ServeFlagsTest, HelpListsEveryFlagByGroup) {
  const std::string help = ServeHelp("serve ...");
  EXPECT_EQ(help.rfind("usage: serve ...\n\nServed model:\n  --export_dir=\"\"\n", 0), 0u) << help;
  for (const char* flag : {"model_file", "reload_every_ms", "host", "port", "threads",
                           "max_connections", "max_request_bytes"}) {
    EXPECT_NE(help.find(std::string("\n  --") + flag + "="), std::string::npos) << flag;
  }
  EXPECT_NE(help.find("\nHTTP server:\n"), std::string::npos);
}

}  // namespace
}  // namespace pst

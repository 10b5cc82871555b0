// --help and --version of every executable and script: they exit 0; ps,
// worker and chief list the project's flags grouped by topic, cluster flags
// first, each group within one screen, and glog's flags only with --helpfull.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/local_cluster.h"

namespace pst {
namespace {

constexpr size_t kScreenLines = 40;

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr
};

Result RunProgram(const std::vector<std::string>& argv) {
  static int runs = 0;
  const std::string log = MakeTestDir("help" + std::to_string(runs++)) + "/output.log";
  auto child = ChildProcess::Start(argv, log);
  if (!child.ok()) return {};
  const std::optional<int> code = (*child)->Wait(std::chrono::seconds(60));
  return {code.value_or(-1), (*child)->Log()};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Executables() {
  std::vector<std::string> names = {"ps", "worker", "chief", "predict", "pst_keygen"};
#ifdef PST_BENCHMARKS_BUILT
  names.insert(names.end(), {"bench_kernels", "bench_model_parallel", "bench_shm", "bench_soak",
                             "bench_transport"});
#endif
  return names;
}

TEST(HelpTest, EveryExecutableAnswersHelpAndVersion) {
  const std::regex version(
      R"(\S+ \(pstrain\) \d+\.\d+\.\d+, commit \S+( \(dirty\))?, \w+ build; )"
      R"(back ends: cpu \((oneDNN [0-9.]+, the default; )?Eigen [0-9.]+[^)]*\))"
      R"((, cuda \d+\.\d+ \+ cuDNN [0-9.]+)?\n)");
  for (const std::string& name : Executables()) {
    for (const char* flag : {"--help", "-h", "--helpfull"}) {
      const Result help = RunProgram({BinDir() + "/" + name, flag});
      EXPECT_EQ(help.code, 0) << name << " " << flag << ":\n" << help.output;
      EXPECT_NE(help.output.find(name), std::string::npos) << name << " " << flag;
    }
    for (const char* flag : {"--version", "-version"}) {
      const Result result = RunProgram({BinDir() + "/" + name, flag});
      EXPECT_EQ(result.code, 0) << name << " " << flag;
      EXPECT_TRUE(std::regex_match(result.output, version)) << name << ": " << result.output;
      EXPECT_EQ(result.output.rfind(name + " (pstrain) ", 0), 0u) << result.output;
    }
  }
}

TEST(HelpTest, TasksListClusterFlagsFirstAndEachGroupFitsAScreen) {
  for (const char* name : {"ps", "worker", "chief"}) {
    for (const char* flag : {"--help", "-h", "--helpshort"}) {
      SCOPED_TRACE(std::string(name) + " " + flag);
      const Result help = RunProgram({BinDir() + "/" + name, flag});
      ASSERT_EQ(help.code, 0) << help.output;
      const std::vector<std::string> lines = Lines(help.output);
      ASSERT_GE(lines.size(), 4u) << help.output;
      EXPECT_EQ(lines[0].rfind(std::string("usage: ") + name + " ", 0), 0u) << lines[0];
      EXPECT_EQ(lines[2], "Cluster:");
      EXPECT_EQ(lines[3], "  --ps_hosts=\"\"");
      EXPECT_EQ(help.output.find("--logtostderr"), std::string::npos)
          << "glog's flags are not ours";
      // A group: a title line "Name:", its flags, up to the next blank line.
      size_t group_start = 0;
      std::string title;
      for (size_t i = 0; i <= lines.size(); ++i) {
        if (i == lines.size() || lines[i].empty()) {
          if (!title.empty()) EXPECT_LE(i - group_start, kScreenLines) << title;
          title.clear();
        } else if (lines[i].back() == ':' && lines[i][0] != ' ') {
          title = lines[i];
          group_start = i;
        }
      }
    }
  }
}

TEST(HelpTest, HelpfullAddsGlogFlagsAfterTheProjectFlags) {
  for (const char* name : {"ps", "worker", "chief"}) {
    const Result help = RunProgram({BinDir() + "/" + name, "--helpfull"});
    ASSERT_EQ(help.code, 0) << name;
    const size_t project = help.output.find("--ps_hosts");
    const size_t glog = help.output.find("--logtostderr");
    ASSERT_NE(glog, std::string::npos) << name;
    EXPECT_LT(project, glog) << name;
  }
}

// A script's usage: its leading comment block, without the "# ".
std::string CommentBlock(const std::string& path) {
  std::ifstream in(path);
  std::string line, block;
  std::getline(in, line);  // #!/usr/bin/env bash
  while (std::getline(in, line) && !line.empty() && line[0] == '#') {
    block += line.substr(line.rfind("# ", 0) == 0 ? 2 : 1) + "\n";
  }
  return block;
}

TEST(HelpTest, EveryScriptPrintsItsUsageBlock) {
  const std::string source = std::getenv("PST_SOURCE_DIR");
  std::vector<std::filesystem::path> paths = {source + "/bench/peers/run.sh"};
  for (const auto& entry : std::filesystem::directory_iterator(source + "/scripts")) {
    paths.push_back(entry.path());
  }
  int checked = 0;
  for (const std::filesystem::path& script : paths) {
    const std::string path = script.string();
    // run_local.sh has its own launcher tests.
    if (script.extension() != ".sh" || script.filename() == "run_local.sh") continue;
    for (const char* flag : {"--help", "-h"}) {
      SCOPED_TRACE(path + " " + flag);
      const Result help = RunProgram({"/bin/bash", path, flag});
      EXPECT_EQ(help.code, 0) << help.output;
      EXPECT_EQ(help.output, CommentBlock(path));
      for (const std::string& line : Lines(help.output)) {
        EXPECT_NE(line.rfind("set -", 0), 0u) << "a code line in the usage";
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
}  // namespace pst

#include "cli/help.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/flags.h"

namespace pst {
namespace {

TEST(HelpTableTest, EveryProjectFlagIsInAGroup) {
  // Guards the two checks below against an empty flag list.
  ASSERT_GE(ProjectFlags().size(), 40u);
  EXPECT_EQ(UngroupedProjectFlags(), std::vector<std::string>())
      << "add these flags to a group of the table in cli/help.cc";
}

TEST(HelpTableTest, EveryNameInTheTableIsAProjectFlag) {
  EXPECT_EQ(UnknownFlagsInHelpTable(), std::vector<std::string>());
}

TEST(HelpTableTest, EveryRoleSeesClusterFirstAndEveryFlagOnce) {
  for (Program role : {Program::kPs, Program::kWorker, Program::kChief}) {
    const std::string help = ProjectHelp(role, "prog --ps_hosts=...");
    EXPECT_EQ(help.rfind("usage: prog --ps_hosts=...\n\nCluster:\n  --ps_hosts=\"\"\n", 0), 0u)
        << help;
    for (const auto& flag : ProjectFlags()) {
      const std::string line = "\n  --" + flag.name + "=";
      const size_t at = help.find(line);
      EXPECT_NE(at, std::string::npos) << flag.name;
      EXPECT_EQ(help.find(line, at + 1), std::string::npos) << flag.name << " twice";
    }
  }
}

// predict is not a task: its own flags and the data's, nothing of the cluster.
TEST(HelpTableTest, PredictSeesItsFlagsAndTheDataOnly) {
  const std::string help = ProjectHelp(Program::kPredict, "predict --model_file=...");
  EXPECT_EQ(help.rfind("usage: predict --model_file=...\n\nPrediction:\n  --model_file=", 0), 0u)
      << help;
  EXPECT_NE(help.find("\nData:\n"), std::string::npos) << help;
  EXPECT_EQ(help.find("--ps_hosts"), std::string::npos) << help;
  EXPECT_EQ(help.find("Read by the other"), std::string::npos) << help;
}

TEST(HelpTableTest, EachFlagShowsItsDefaultAndWrappedHelp) {
  const std::string help = ProjectHelp(Program::kWorker, "worker");
  EXPECT_NE(help.find("\n  --batch_size=100\n      Examples per worker step\n"), std::string::npos);
  EXPECT_NE(help.find("\n  --mode=\"async\"\n"), std::string::npos);
  EXPECT_NE(help.find("\n  --gpu_memory_fraction=1\n"), std::string::npos);
  EXPECT_NE(help.find("\n  --momentum=0.9\n"), std::string::npos);
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
}

TEST(HelpTableTest, TheRolesOwnGroupsComeFirst) {
  const std::string ps = ProjectHelp(Program::kPs, "ps");
  EXPECT_LT(ps.find("\nCheckpoints:"), ps.find("\nTraining:"));
  const std::string worker = ProjectHelp(Program::kWorker, "worker");
  EXPECT_LT(worker.find("\nDevice options:"), worker.find("\nCheckpoints:"));
}

TEST(HelpTableTest, GlogFlagsOnlyInFullHelpAfterTheProjectFlags) {
  EXPECT_EQ(ProjectHelp(Program::kChief, "chief").find("--logtostderr"), std::string::npos);
  const std::string full = FullHelp(Program::kChief, "chief");
  EXPECT_GT(full.find("\nglog and gflags:\n"), full.find("--curve_keys_dir="));
  EXPECT_GT(full.find("--logtostderr="), full.find("\nglog and gflags:\n"));
}

}  // namespace
}  // namespace pst

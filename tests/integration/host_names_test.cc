// Tasks named by host name, as Slurm and Kubernetes name them: servers bind
// the address their name resolves to (transport/bind_address.h), clients
// connect by name. Names that already resolve to loopback stand in for the
// cluster's DNS names: localhost, and this machine's own name when
// /etc/hosts maps it to loopback.
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// This machine's host name when it resolves to 127.0.0.1, else localhost.
std::string LoopbackName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &found) != 0) return "localhost";
  char numeric[NI_MAXHOST] = {};
  getnameinfo(found->ai_addr, found->ai_addrlen, numeric, sizeof numeric, nullptr, 0,
              NI_NUMERICHOST);
  freeaddrinfo(found);
  return std::string(numeric) == "127.0.0.1" ? name : "localhost";
}

class HostNamesTest : public SyntheticDataTest {
 protected:
  std::vector<std::string> TrainingFlags(int train_steps) {
    return {"--data_dir=" + data_dir(), "--model=mlp",
            "--batch_size=50",          "--train_steps=" + std::to_string(train_steps),
            "--eval_every_steps=0",     "--log_every_steps=20",
            "--rpc_timeout_ms=10000"};
  }
  static bool WaitForLog(ChildProcess& task, const std::string& text) {
    for (int i = 0; i < 3000 && task.Log().find(text) == std::string::npos; ++i) {
      if (!task.Running()) break;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return task.Log().find(text) != std::string::npos;
  }

  // Starts ps, chief and worker with TF_CONFIG exactly as the training-
  // operator writes it for a TFJob, the chief listed under `chief_key`
  // ("chief", or "master" for older TFJobs), and trains.
  void TrainWithTfJobConfig(const std::string& chief_key) {
    LocalCluster cluster(1, 1, TestDir());
    const auto& p = cluster.ports();
    const std::string hosts = "{\"" + chief_key + "\": [\"localhost:" + std::to_string(p[0]) +
                              "\"], \"ps\": [\"localhost:" + std::to_string(p[1]) +
                              "\"], \"worker\": [\"localhost:" + std::to_string(p[2]) + "\"]}";
    std::vector<std::unique_ptr<ChildProcess>> tasks;
    for (const std::string role : {"ps", "chief", "worker"}) {
      const std::string type = role == "chief" ? chief_key : role;
      const std::string tf_config = "TF_CONFIG={\"cluster\": " + hosts +
                                    ", \"task\": {\"type\": \"" + type +
                                    "\", \"index\": 0}, \"environment\": \"cloud\"}";
      std::vector<std::string> argv = {BinDir() + "/" + role};
      for (const auto& f : TrainingFlags(60)) argv.push_back(f);
      auto child = ChildProcess::Start(argv, cluster.dir() + "/" + role + ".log", {tf_config});
      ASSERT_TRUE(child.ok()) << child.status().ToString();
      tasks.push_back(std::move(child).value());
    }
    for (auto& t : tasks) EXPECT_EQ(t->Wait(seconds(120)), 0) << t->Log();
    const std::string chief = tasks[1]->Log();
    EXPECT_NE(chief.find("binds 127.0.0.1 ('localhost' resolves to it on this machine)"),
              std::string::npos)
        << chief;
    EXPECT_GE(ReportValue(chief, "Global-Step: ").value_or(0), 60) << chief;
  }
};

TEST_F(HostNamesTest, PsAndChiefNamedByHostNameBindAndTrain) {
  const std::string name = LoopbackName();
  LocalCluster cluster(2, 1, TestDir());
  const auto& p = cluster.ports();
  std::vector<std::string> flags = TrainingFlags(60);
  // After LocalCluster's 127.0.0.1 flags: the later value wins.
  flags.insert(flags.end(), {"--chief_host=localhost:" + std::to_string(p[0]),
                             "--ps_hosts=localhost:" + std::to_string(p[1]) + "," + name + ":" +
                                 std::to_string(p[2]),
                             "--worker_hosts=localhost:" + std::to_string(p[3])});
  cluster.StartAll(flags);
  const auto exits = cluster.WaitAll(seconds(120));
  ChildProcess& chief = cluster.task("chief");
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits) << chief.Log();
  EXPECT_GE(ReportValue(chief.Log(), "Global-Step: ").value_or(0), 60) << chief.Log();
  // Each server says which address it bound, and why.
  EXPECT_NE(chief.Log().find("binds 127.0.0.1 ('localhost' resolves to it on this machine)"),
            std::string::npos)
      << chief.Log();
  const std::string ps1 = cluster.task("ps", 1).Log();
  EXPECT_NE(ps1.find("binds 127.0.0.1 ('" + name + "' resolves to it on this machine)"),
            std::string::npos)
      << ps1;
}

TEST_F(HostNamesTest, TfJobConfigWithChiefTrains) { TrainWithTfJobConfig("chief"); }

TEST_F(HostNamesTest, TfJobConfigWithMasterTrains) { TrainWithTfJobConfig("master"); }

// Kubernetes publishes the chief pod's DNS name only once it runs: a ps
// that starts first waits for the name rather than exiting.
TEST_F(HostNamesTest, PsWaitsForTheChiefNameToResolve) {
  LocalCluster cluster(1, 1, TestDir());
  std::vector<std::string> flags = TrainingFlags(60);
  flags.push_back("--chief_host=pst-chief-not-yet.invalid:" + std::to_string(cluster.ports()[0]));
  ChildProcess& ps = cluster.StartTask("ps", 0, flags);
  ASSERT_TRUE(WaitForLog(ps, "waiting for the name to resolve")) << ps.Log();
  EXPECT_TRUE(ps.Running()) << ps.Log();
  EXPECT_NE(ps.Log().find("cannot resolve the chief host 'pst-chief-not-yet.invalid'"),
            std::string::npos)
      << ps.Log();
  ps.Signal(SIGTERM);
  ASSERT_TRUE(ps.Wait(seconds(30)).has_value()) << "still waiting after SIGTERM\n" << ps.Log();
}

TEST_F(HostNamesTest, ChiefCreatesAMissingNestedRunDir) {
  LocalCluster cluster(1, 1, TestDir());
  const std::string run_dir = cluster.dir() + "/runs/a/b";
  std::vector<std::string> flags = TrainingFlags(40);
  flags.push_back("--run_dir=" + run_dir);
  cluster.StartAll(flags);
  const auto exits = cluster.WaitAll(seconds(120));
  for (const TaskExit& e : exits) {
    EXPECT_EQ(e.code, 0) << DescribeExits(exits) << cluster.task("chief").Log();
  }
  EXPECT_TRUE(std::filesystem::exists(run_dir + "/model.bin"));
  EXPECT_TRUE(std::filesystem::exists(run_dir + "/metrics.jsonl"));
}

}  // namespace
}  // namespace pst

// Several hosts (network namespaces, needs root; skipped otherwise): ps,
// chief and workers on separate hosts joined by veth pairs. One worker's
// link is cut during sync training with one spare: training completes.
#include <thread>

#include "tests/integration/network_lab.h"
#include "tests/integration/synthetic_data_test.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

using std::chrono::seconds;

class MultiHostTest : public SyntheticDataTest {};

TEST_F(MultiHostTest, CuttingAWorkersLinkDoesNotStopSyncTrainingWithASpare) {
  auto lab = NetworkLab::Create(5);  // host 0: chief + ps 0; host 1: ps 1; hosts 2-4: workers
  if (!lab.ok()) GTEST_SKIP() << "no network namespaces here: " << lab.status().ToString();
  const NetworkLab& net = **lab;
  const std::vector<std::string> flags = {
      "--chief_host=" + net.address(0) + ":2210",
      "--ps_hosts=" + net.address(0) + ":2220," + net.address(1) + ":2220",
      "--worker_hosts=" + net.address(2) + ":2230," + net.address(3) + ":2230," + net.address(4) +
          ":2230",
      "--data_dir=" + data_dir(),
      "--model=mlp",
      "--batch_size=50",
      "--mode=sync",
      "--replicas_to_aggregate=2",
      "--train_steps=400",
      "--eval_every_steps=0",
      "--log_every_steps=20",
      "--simulated_delay_ms=5",
      "--heartbeat_timeout_ms=2000",
      "--rpc_timeout_ms=3000",
      "--join_timeout_ms=20000"};
  const std::string dir = TestDir();
  std::vector<std::unique_ptr<ChildProcess>> tasks;
  auto start = [&](int host, const std::string& role, int index) -> ChildProcess& {
    std::vector<std::string> argv = net.On(host);
    argv.push_back(BinDir() + "/" + role);
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--task_index=" + std::to_string(index));
    auto child = ChildProcess::Start(argv, dir + "/" + role + "-" + std::to_string(index) + ".log");
    CHECK(child.ok());
    tasks.push_back(std::move(child).value());
    return *tasks.back();
  };
  ChildProcess& ps0 = start(0, "ps", 0);
  ChildProcess& ps1 = start(1, "ps", 1);
  ChildProcess& chief = start(0, "chief", 0);
  ChildProcess& worker0 = start(2, "worker", 0);
  ChildProcess& worker1 = start(3, "worker", 1);
  start(4, "worker", 2);
  for (int i = 0; i < 3000 && ReportValue(chief.Log(), "Step: ").value_or(0) < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(ReportValue(chief.Log(), "Step: ").value_or(0), 100) << chief.Log();
  ASSERT_TRUE(lab->get()->CutLink(4).ok());
  EXPECT_EQ(chief.Wait(seconds(180)), 0) << chief.Log();
  EXPECT_EQ(ReportValue(chief.Log(), "Global-Step: ").value_or(0), 400);
  EXPECT_NE(chief.Log().find("worker:2 declared dead"), std::string::npos) << chief.Log();
  for (ChildProcess* t : {&ps0, &ps1, &worker0, &worker1}) EXPECT_EQ(t->Wait(seconds(60)), 0);
  // The cut-off worker is stopped by its ChildProcess's destructor.
}

}  // namespace
}  // namespace pst

// End to end on the real MNIST (needs MNIST_DIR; skipped without it):
// asynchronous training, 2 ps, 2 workers, mlp_relu, to >= 0.97 test accuracy.
#include <cstdlib>

#include <gtest/gtest.h>

#include "tests/integration/local_cluster.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

TEST(MnistEndToEndTest, AsyncTwoPsTwoWorkersReaches97Percent) {
  const char* mnist = std::getenv("MNIST_DIR");
  if (mnist == nullptr || *mnist == '\0') {
    GTEST_SKIP() << "MNIST_DIR not set: this test needs the full MNIST set";
  }
  LocalCluster cluster(2, 2, MakeTestDir("mnist-async"));
  cluster.StartAll({"--data_dir=" + std::string(mnist), "--model=mlp_relu",
                    "--train_steps=3000", "--eval_every_steps=1000",
                    "--run_dir=" + cluster.dir()});
  const auto exits = cluster.WaitAll(std::chrono::seconds(300));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits);
  const std::string chief = cluster.task("chief").Log();
  EXPECT_GE(ReportValue(chief, "Test-Accuracy: ").value_or(0), 0.97) << chief;
}

}  // namespace
}  // namespace pst

namespace pst {
namespace {

TEST(MnistEndToEndTest, SyncTwoPsThreeWorkersOneSpareReaches97Percent) {
  const char* mnist = std::getenv("MNIST_DIR");
  if (mnist == nullptr || *mnist == '\0') {
    GTEST_SKIP() << "MNIST_DIR not set: this test needs the full MNIST set";
  }
  LocalCluster cluster(2, 3, MakeTestDir("mnist-sync"));
  cluster.StartAll({"--data_dir=" + std::string(mnist), "--model=mlp_relu", "--mode=sync",
                    "--replicas_to_aggregate=2", "--train_steps=1500",
                    "--eval_every_steps=500", "--run_dir=" + cluster.dir()});
  const auto exits = cluster.WaitAll(std::chrono::seconds(300));
  for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits);
  const std::string chief = cluster.task("chief").Log();
  EXPECT_GE(ReportValue(chief, "Test-Accuracy: ").value_or(0), 0.97) << chief;
}

}  // namespace
}  // namespace pst

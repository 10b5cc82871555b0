// End to end on the real MNIST (needs MNIST_DIR; skipped without it):
// asynchronous and sync training of mlp_relu to >= 0.965 test accuracy, and
// the cnn to >= 0.975. Each bound sits below the worst of 10 seeds
// (--seed=1..10, each through scripts/run_local.sh with the test's flags) on
// the 2-core dev machine on 2026-11-28 at 8c6c3f2, shared with other
// engineers' builds (load 9-12), and below the worst run seen in ctest.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "tests/integration/local_cluster.h"
#include "tests/integration/test_util.h"

namespace pst {
namespace {

class MnistEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* mnist = std::getenv("MNIST_DIR");
    if (mnist == nullptr || *mnist == '\0') {
      GTEST_SKIP() << "MNIST_DIR not set: this test needs the full MNIST set";
    }
    mnist_dir_ = mnist;
  }
  // Trains on a local cluster (mlp_relu unless `flags` say otherwise);
  // returns the chief's test accuracy.
  double Train(int num_ps, int num_workers, std::vector<std::string> flags) {
    LocalCluster cluster(
        num_ps, num_workers,
        MakeTestDir(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    flags.insert(flags.begin(), "--model=mlp_relu");  // a later --model wins
    flags.push_back("--data_dir=" + mnist_dir_);
    flags.push_back("--run_dir=" + cluster.dir());
    cluster.StartAll(flags);
    const auto exits = cluster.WaitAll(std::chrono::seconds(300));
    for (const TaskExit& e : exits) EXPECT_EQ(e.code, 0) << DescribeExits(exits);
    const std::string chief = cluster.task("chief").Log();
    const double accuracy = ReportValue(chief, "Test-Accuracy: ").value_or(0);
    // In the test's output, to see how near its bound a passing run came.
    RecordProperty("test_accuracy", std::to_string(accuracy));
    std::cout << "test accuracy: " << accuracy << std::endl;
    return accuracy;
  }
  std::string mnist_dir_;
};

// 10 seeds: 0.9770-0.9819 (median 0.9810). The timing of the two workers'
// pushes moves one seed's accuracy by about as much as the seed does (see
// the sync test), so the bound keeps the sync test's room below the worst.
TEST_F(MnistEndToEndTest, AsyncTwoPsTwoWorkersReaches96Point5Percent) {
  EXPECT_GE(Train(2, 2, {"--train_steps=5000", "--eval_every_steps=2500"}), 0.965);
}

// 10 seeds: 0.9734-0.9776 (median 0.9758); the default seed 5 times more:
// 0.9736-0.9765. Which two of the three workers' gradients make each step depends
// on the timing: one ctest -j2 run of the default seed reached only 0.9691
// (issue 46) against a bound of 0.97, so the bound is 0.965.
TEST_F(MnistEndToEndTest, SyncTwoPsThreeWorkersOneSpareReaches96Point5Percent) {
  EXPECT_GE(Train(2, 3,
                  {"--mode=sync", "--replicas_to_aggregate=2", "--train_steps=1500",
                   "--eval_every_steps=500"}),
            0.965);
}

// Async: how the two workers' steps interleave (and so the staleness of
// their gradients) depends on the load; under a CPU hog one run reached
// 0.9814 where idle runs pass 0.985, so the bound is 0.975. 10 seeds:
// 0.9849-0.9895 (median 0.9884).
TEST_F(MnistEndToEndTest, AsyncCnnOnCpuReaches97Point5Percent) {
  EXPECT_GE(Train(1, 2, {"--model=cnn", "--train_steps=2000", "--eval_every_steps=1000"}), 0.975);
}

}  // namespace
}  // namespace pst

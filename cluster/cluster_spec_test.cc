#include "cluster/cluster_spec.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

TEST(ClusterSpecTest, ParsesHostLists) {
  auto hosts = ParseHostList("ps_hosts", "h0:2220,10.0.0.2:2221");
  ASSERT_TRUE(hosts.ok());
  ASSERT_EQ(hosts->size(), 2u);
  EXPECT_EQ((*hosts)[1].host, "10.0.0.2");
  EXPECT_EQ((*hosts)[1].port, 2221);
  EXPECT_EQ((*hosts)[0].Endpoint(), "tcp://h0:2220");
  EXPECT_TRUE(ParseHostList("ps_hosts", "")->empty());
}

TEST(ClusterSpecTest, BadHostsNameTheFlag) {
  for (const char* bad : {"h0", "h0:", "h0:99999", "h0:abc", ":80", "h0:1,,h1:2"}) {
    auto hosts = ParseHostList("worker_hosts", bad);
    ASSERT_FALSE(hosts.ok()) << bad;
    EXPECT_NE(hosts.status().message().find("--worker_hosts"), std::string::npos);
  }
}

TEST(ClusterSpecTest, ParsesTfConfig) {
  auto config = ParseTfConfig(R"({"cluster": {"ps": ["a:1", "b:2"],
      "worker": ["c:3"], "chief": ["d:4"]}, "task": {"type": "worker", "index": 0}})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->ps, (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(config->workers, (std::vector<std::string>{"c:3"}));
  EXPECT_EQ(config->chief, "d:4");
  EXPECT_EQ(config->task_type, "worker");
  EXPECT_EQ(config->task_index, 0);
}

// Older TFJobs name the chief "master", in the cluster and as the task type.
TEST(ClusterSpecTest, MasterIsTheChief) {
  auto config = ParseTfConfig(R"({"cluster": {"master": ["m-0.ns.svc:2222"],
      "ps": ["p-0.ns.svc:2222"], "worker": ["w-0.ns.svc:2222"]},
      "task": {"type": "master", "index": 0}, "environment": "cloud"})");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->chief, "m-0.ns.svc:2222");
  EXPECT_EQ(config->task_type, "chief");
  EXPECT_EQ(config->task_index, 0);
}

TEST(ClusterSpecTest, ChiefAndMasterTogetherAreRefused) {
  auto config = ParseTfConfig(R"({"cluster": {"chief": ["a:1"], "master": ["b:2"]}})");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("both chief and master"), std::string::npos)
      << config.status().message();
}

// What the training-operator writes for a TFJob with enableDynamicWorker.
TEST(ClusterSpecTest, SparseClusterIsRefusedWithTheReason) {
  auto config = ParseTfConfig(R"({"sparseCluster": {"ps": ["p:1"], "worker": {"1": "w:2"}},
      "task": {"type": "worker", "index": 1}})");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kInvalidArgument);
  EXPECT_NE(config.status().message().find("sparseCluster (a TFJob with enableDynamicWorker) is "
                                           "not supported"),
            std::string::npos)
      << config.status().message();
}

TEST(ClusterSpecTest, BadTfConfigIsAnError) {
  EXPECT_FALSE(ParseTfConfig("{").ok());
  EXPECT_FALSE(ParseTfConfig(R"({"cluster": {"ps": "a:1"}})").ok());
  EXPECT_FALSE(ParseTfConfig(R"({"task": {"index": -1}})").ok());
  EXPECT_FALSE(ParseTfConfig("[1,2]").ok());
}

TEST(ClusterSpecTest, TaskIndexOutOfRangeNamesFlagAndRange) {
  ClusterSpec spec;
  spec.ps = {{"h", 1}, {"h", 2}};
  Status s = ValidateTask(spec, TaskType::kPs, 9);
  EXPECT_EQ(s.message(),
            "--task_index=9 is out of range: the cluster has 2 ps task(s), "
            "valid indexes 0..1");
  EXPECT_TRUE(ValidateTask(spec, TaskType::kPs, 1).ok());
  EXPECT_TRUE(ValidateTask(spec, TaskType::kChief, 0).ok());
}

}  // namespace
}  // namespace pst

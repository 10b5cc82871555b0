// W clients push K unit gradients each to one counter variable of a real ps,
// concurrently: the counter ends at exactly W*K, and so does the global step.
#include <thread>

#include "tests/integration/ps_fixture.h"

namespace pst {
namespace {

class NoLostUpdatesTest : public PsFixture {};

TEST_F(NoLostUpdatesTest, ConcurrentPushesAllApply) {
  constexpr int kClients = 6, kPushes = 300;
  StartPs({{"counter", DType::kFloat32, {4}, Initializer::kZeros}}, {"--ps_threads=2"});
  std::vector<std::thread> threads;
  std::vector<Status> results(kClients);
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([this, c, &results] {
      auto client = NewClient(c);
      Tensor minus_one(DType::kFloat32, {4});
      for (int i = 0; i < 4; ++i) minus_one.f32()[i] = -1.0f;  // SGD, lr 1: +1 per push
      for (int i = 0; i < kPushes; ++i) {
        auto pushed = client->Push({1}, {minus_one}, /*increment_global_step=*/true);
        if (!pushed.ok()) {
          results[c] = pushed.status();
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : results) ASSERT_TRUE(s.ok()) << s.ToString();
  auto client = NewClient();
  std::vector<Tensor> values;
  ASSERT_TRUE(client->Pull({0, 1}, &values).ok());
  EXPECT_EQ(values[0].i64()[0], kClients * kPushes);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(values[1].f32()[i], kClients * kPushes);
}

}  // namespace
}  // namespace pst

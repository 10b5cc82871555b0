#include "ps/replication/push_ledger.h"

#include <gtest/gtest.h>

#include <vector>

namespace pst {
namespace {

TEST(PushLedgerTest, HoldsWhatWasRecordedAndNothingLater) {
  PushLedger ledger;
  EXPECT_FALSE(ledger.Holds({0, 7, 1}));
  ledger.Record({0, 7, 1});
  ledger.Record({0, 7, 2});
  EXPECT_TRUE(ledger.Holds({0, 7, 1}));
  EXPECT_TRUE(ledger.Holds({0, 7, 2}));
  EXPECT_FALSE(ledger.Holds({0, 7, 3}));
  EXPECT_FALSE(ledger.Holds({1, 7, 1}));  // another worker
}

TEST(PushLedgerTest, ARestartedWorkerStartsAfresh) {
  PushLedger ledger;
  ledger.Record({2, 100, 50});
  EXPECT_FALSE(ledger.Holds({2, 101, 1}));  // a new incarnation counts from 1
  ledger.Record({2, 101, 1});
  EXPECT_TRUE(ledger.Holds({2, 101, 1}));
  EXPECT_FALSE(ledger.Holds({2, 101, 2}));
}

// A push streamed in parts: a shard may apply part 1 before part 0 (one
// waits for a handler thread, the other is served at once); part 0 then
// still applies.
TEST(PushLedgerTest, APushsPartsAreHeldInAnyOrder) {
  PushLedger ledger;
  ledger.Record({0, 7, 2, 1});
  EXPECT_FALSE(ledger.Holds({0, 7, 2, 0}));
  EXPECT_TRUE(ledger.Holds({0, 7, 2, 1}));
  ledger.Record({0, 7, 2, 0});
  EXPECT_TRUE(ledger.Holds({0, 7, 2, 0}));
  EXPECT_FALSE(ledger.Holds({0, 7, 2, 2}));
}

// Two pushes of a worker in flight at once (PushLedger::kPushesInFlight):
// the newer one's parts may arrive before the older one's, which still
// apply; a push two before the newest is held whole.
TEST(PushLedgerTest, TheTwoNewestPushesAreHeldByTheirParts) {
  PushLedger ledger;
  ledger.Record({0, 7, 1, 0});
  ledger.Record({0, 7, 1, 1});
  ledger.Record({0, 7, 3, 0});  // push 3 overtook push 2: none of 2 is held
  EXPECT_FALSE(ledger.Holds({0, 7, 2, 0}));
  EXPECT_TRUE(ledger.Holds({0, 7, 1, 5}));  // two before the newest: all of it
  ledger.Record({0, 7, 2, 1});
  EXPECT_TRUE(ledger.Holds({0, 7, 2, 1}));
  EXPECT_FALSE(ledger.Holds({0, 7, 2, 0}));
  EXPECT_TRUE(ledger.Holds({0, 7, 3, 0}));
  EXPECT_FALSE(ledger.Holds({0, 7, 3, 1}));
  ledger.Record({0, 7, 4, 0});  // push 3's parts are now the previous push's
  EXPECT_TRUE(ledger.Holds({0, 7, 3, 0}));
  EXPECT_FALSE(ledger.Holds({0, 7, 3, 1}));
  EXPECT_TRUE(ledger.Holds({0, 7, 2, 0}));  // two before: whole
}

TEST(PushLedgerTest, APushWithoutIdIsNeverHeld) {
  PushLedger ledger;
  ledger.Record({0, 0, 0});
  EXPECT_EQ(ledger.workers(), 0u);
  EXPECT_FALSE(ledger.Holds({0, 0, 0}));
}

TEST(PushLedgerTest, RoundTripsThroughATensor) {
  PushLedger ledger;
  ledger.Record({0, 0xFFFFFFFFFFFFFFF0ull, 9});  // incarnations use all 64 bits
  ledger.Record({5, 3, 4, 2});
  ledger.Record({5, 3, 4, 0});
  ledger.Record({5, 3, 5, 1});
  StatusOr<PushLedger> back = PushLedger::FromTensor(ledger.ToTensor());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->workers(), 2u);
  EXPECT_TRUE(back->Holds({0, 0xFFFFFFFFFFFFFFF0ull, 9}));
  EXPECT_FALSE(back->Holds({0, 0xFFFFFFFFFFFFFFF0ull, 10}));
  EXPECT_TRUE(back->Holds({5, 3, 4, 0}));
  EXPECT_FALSE(back->Holds({5, 3, 4, 1}));
  EXPECT_TRUE(back->Holds({5, 3, 4, 2}));
  EXPECT_TRUE(back->Holds({5, 3, 5, 1}));
  EXPECT_FALSE(back->Holds({5, 3, 5, 0}));
  EXPECT_TRUE(back->Holds({5, 3, 3, 7}));
}

TEST(PushLedgerTest, RefusesAMalformedTensor) {
  const auto refused = [](const Tensor& t) {
    return PushLedger::FromTensor(t).status().code() == Code::kDataLoss;
  };
  EXPECT_TRUE(refused(Tensor(DType::kFloat32, {1, 4})));
  EXPECT_TRUE(refused(Tensor(DType::kInt64, {2, 3})));
  const auto rows = [](std::vector<int64_t> values) {
    Tensor t(DType::kInt64, {static_cast<int64_t>(values.size() / 4), 4});
    for (size_t i = 0; i < values.size(); ++i) t.i64()[i] = values[i];
    return t;
  };
  EXPECT_FALSE(refused(rows({0, 7, 3, 0, 0, 7, 3, 1})));
  EXPECT_TRUE(refused(rows({0, 7, 3, 1, 0, 7, 3, 1})));              // a part twice
  EXPECT_FALSE(refused(rows({0, 7, 3, 0, 0, 7, 4, 1})));             // the two newest pushes
  EXPECT_TRUE(refused(rows({0, 7, 3, 0, 0, 7, 5, 1})));              // not one after the other
  EXPECT_TRUE(refused(rows({0, 7, 4, 0, 0, 7, 3, 1})));              // the newer first
  EXPECT_TRUE(refused(rows({0, 7, 3, 0, 0, 7, 4, 0, 0, 7, 5, 0})));  // three
  EXPECT_TRUE(refused(rows({-1, 7, 3, 0})));
  EXPECT_TRUE(refused(rows({0, 7, 0, 0})));  // no sequence
  EXPECT_TRUE(refused(rows({0, 7, 3, -1})));
}

}  // namespace
}  // namespace pst

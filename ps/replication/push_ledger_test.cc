#include "ps/replication/push_ledger.h"

#include <gtest/gtest.h>

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

TEST(PushLedgerTest, APushWithoutIdIsNeverHeld) {
  PushLedger ledger;
  ledger.Record({0, 0, 0});
  EXPECT_EQ(ledger.workers(), 0u);
  EXPECT_FALSE(ledger.Holds({0, 0, 0}));
}

TEST(PushLedgerTest, RoundTripsThroughATensor) {
  PushLedger ledger;
  ledger.Record({0, 0xFFFFFFFFFFFFFFF0ull, 9});  // incarnations use all 64 bits
  ledger.Record({5, 3, 4});
  StatusOr<PushLedger> back = PushLedger::FromTensor(ledger.ToTensor());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->workers(), 2u);
  EXPECT_TRUE(back->Holds({0, 0xFFFFFFFFFFFFFFF0ull, 9}));
  EXPECT_FALSE(back->Holds({0, 0xFFFFFFFFFFFFFFF0ull, 10}));
  EXPECT_TRUE(back->Holds({5, 3, 4}));
}

TEST(PushLedgerTest, RefusesAMalformedTensor) {
  EXPECT_EQ(PushLedger::FromTensor(Tensor(DType::kFloat32, {1, 3})).status().code(),
            Code::kDataLoss);
  EXPECT_EQ(PushLedger::FromTensor(Tensor(DType::kInt64, {2, 2})).status().code(), Code::kDataLoss);
  Tensor twice(DType::kInt64, {2, 3});  // worker 0 twice
  EXPECT_EQ(PushLedger::FromTensor(twice).status().code(), Code::kDataLoss);
  Tensor negative(DType::kInt64, {1, 3});
  negative.i64()[0] = -1;
  EXPECT_EQ(PushLedger::FromTensor(negative).status().code(), Code::kDataLoss);
}

}  // namespace
}  // namespace pst

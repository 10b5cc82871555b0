#include "ps/streaming/stream_ledger.h"

#include <gtest/gtest.h>

namespace pst {
namespace {

StreamBatch Mark(int64_t batch, int64_t examples = 10, bool last = false) {
  return StreamBatch{/*stream=*/42, batch, /*batch_size=*/10, examples, last};
}

void Apply(StreamLedger* ledger, const StreamBatch& b) {
  ASSERT_TRUE(ledger->Check(b).ok());
  ASSERT_FALSE(ledger->Holds(b));
  ledger->Record(b);
}

TEST(StreamLedgerTest, BatchesInOrderMoveTheFloor) {
  StreamLedger ledger;
  EXPECT_EQ(ledger.Progress(42).next_batch, 1);
  for (int b = 1; b <= 3; ++b) Apply(&ledger, Mark(b));
  const StreamProgress p = ledger.Progress(42);
  EXPECT_EQ(p.next_batch, 4);
  EXPECT_EQ(p.examples, 30);
  EXPECT_EQ(p.batch_size, 10);
  EXPECT_FALSE(p.complete);
  EXPECT_TRUE(ledger.Holds(Mark(2)));
  EXPECT_FALSE(ledger.Holds(Mark(4)));
  EXPECT_FALSE(ledger.Holds(StreamBatch{43, 1, 10, 10, false}));  // another stream
}

TEST(StreamLedgerTest, OutOfOrderBatchesLeaveAGapUntilItArrives) {
  StreamLedger ledger;
  Apply(&ledger, Mark(1));
  Apply(&ledger, Mark(3));
  EXPECT_EQ(ledger.Progress(42).next_batch, 2);  // a replay starts at the gap
  EXPECT_TRUE(ledger.Holds(Mark(3)));
  Apply(&ledger, Mark(2));
  EXPECT_EQ(ledger.Progress(42).next_batch, 4);
}

TEST(StreamLedgerTest, CompleteOnceEveryBatchUpToTheLastIsApplied) {
  StreamLedger ledger;
  Apply(&ledger, Mark(1));
  Apply(&ledger, Mark(3, 4, /*last=*/true));
  EXPECT_FALSE(ledger.Progress(42).complete);  // batch 2 missing
  Apply(&ledger, Mark(2));
  const StreamProgress p = ledger.Progress(42);
  EXPECT_TRUE(p.complete);
  EXPECT_EQ(p.examples, 24);
}

TEST(StreamLedgerTest, RefusesImpossibleMarksAndAnotherBatchSize) {
  StreamLedger ledger;
  EXPECT_EQ(ledger.Check(Mark(0)).code(), Code::kInvalidArgument);
  EXPECT_EQ(ledger.Check(Mark(1, 11)).code(), Code::kInvalidArgument);  // more than the size
  EXPECT_EQ(ledger.Check(Mark(1, 0)).code(), Code::kInvalidArgument);
  Apply(&ledger, Mark(1));
  const Status other = ledger.Check(StreamBatch{42, 2, 20, 20, false});
  EXPECT_EQ(other.code(), Code::kInvalidArgument);
  EXPECT_NE(other.message().find("--batch_size"), std::string::npos) << other.message();
}

TEST(StreamLedgerTest, RefusesABatchFurtherAheadThanThePushesInFlight) {
  StreamLedger ledger;
  // A new stream starts at batch 1 (or 2, the second push in flight).
  const Status skipped = ledger.Check(Mark(3));
  EXPECT_EQ(skipped.code(), Code::kOutOfRange);
  EXPECT_TRUE(IsBehindStream(skipped)) << skipped.message();
  Apply(&ledger, Mark(1));
  Apply(&ledger, Mark(3));  // batch 2 still in flight
  EXPECT_TRUE(IsBehindStream(ledger.Check(Mark(4))));
  Apply(&ledger, Mark(2));
  EXPECT_TRUE(ledger.Check(Mark(4)).ok());
  EXPECT_TRUE(ledger.Check(Mark(5)).ok());
  EXPECT_TRUE(IsBehindStream(ledger.Check(Mark(6))));
  EXPECT_FALSE(IsBehindStream(ledger.Check(StreamBatch{42, 4, 20, 20, false})));
}

TEST(StreamLedgerTest, RoundTripsThroughATensor) {
  StreamLedger ledger;
  Apply(&ledger, Mark(1));
  Apply(&ledger, Mark(3, 5, true));
  Apply(&ledger, StreamBatch{7, 1, 4, 4, false});
  StatusOr<StreamLedger> back = StreamLedger::FromTensor(ledger.ToTensor());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->size(), 2u);
  EXPECT_TRUE(back->Holds(Mark(3)));
  EXPECT_FALSE(back->Holds(Mark(2)));
  EXPECT_EQ(back->Progress(42).examples, 15);
  EXPECT_EQ(back->Progress(7).next_batch, 2);
  back->Record(Mark(2));
  EXPECT_TRUE(back->Progress(42).complete);
}

TEST(StreamLedgerTest, RefusesAMalformedTensor) {
  EXPECT_EQ(StreamLedger::FromTensor(Tensor(DType::kInt64, {1, 3})).status().code(),
            Code::kDataLoss);
  StreamLedger ledger;
  ledger.Record(Mark(1));
  Tensor t = ledger.ToTensor();
  t.i64()[2] = -1;  // the floor
  EXPECT_EQ(StreamLedger::FromTensor(t).status().code(), Code::kDataLoss);
  Tensor zero_id = ledger.ToTensor();
  zero_id.i64()[0] = 0;
  EXPECT_EQ(StreamLedger::FromTensor(zero_id).status().code(), Code::kDataLoss);
}

TEST(StreamLedgerTest, StreamIdsAreStableAndNeverZero) {
  EXPECT_EQ(StreamIdOf("logs/part-0001.txt"), StreamIdOf("logs/part-0001.txt"));
  EXPECT_NE(StreamIdOf("logs/part-0001.txt"), StreamIdOf("logs/part-0002.txt"));
  EXPECT_NE(StreamIdOf(""), 0u);
}

}  // namespace
}  // namespace pst

#include "transport/shm/shm_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "transport/shm/shm_layout.h"
#include "transport/shm/shm_testing.h"

namespace pst {
namespace {

// Message i's bytes: a pattern no other message of the test repeats.
std::vector<uint8_t> Payload(uint64_t i, size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t k = 0; k < size; ++k) bytes[k] = static_cast<uint8_t>(i * 131 + k * 7 + (k >> 8));
  return bytes;
}

class ShmRingTest : public ShmTest {
 protected:
  // Before the base's check for segments left behind.
  void TearDown() override {
    reader_.reset();
    writer_.reset();
    segment_.reset();
    ShmTest::TearDown();
  }

  void MakeRing(size_t capacity) {
    auto segment = ShmSegment::Create(cluster_id_, "ring", capacity);
    ASSERT_TRUE(segment.ok()) << segment.status().ToString();
    segment_ = std::move(*segment);
    auto writer = ShmRingWriter::Attach(*segment_);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    writer_ = std::move(*writer);
    auto reader = ShmRingReader::Attach(*segment_);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    reader_ = std::move(*reader);
  }

  bool Write(const std::vector<uint8_t>& bytes) {
    StatusOr<bool> written = writer_->TryWrite(bytes.data(), bytes.size());
    EXPECT_TRUE(written.ok()) << written.status().ToString();
    return written.ok() && *written;
  }

  std::optional<ShmMessage> Read() {
    StatusOr<std::optional<ShmMessage>> message = reader_->TryRead();
    EXPECT_TRUE(message.ok()) << message.status().ToString();
    return message.ok() ? *message : std::nullopt;
  }

  // Declared first: the writer and the reader borrow it.
  std::unique_ptr<ShmSegment> segment_;
  std::unique_ptr<ShmRingWriter> writer_;
  std::unique_ptr<ShmRingReader> reader_;
};

TEST_F(ShmRingTest, ReadsEachMessageInPlaceWithItsLengthAndSequence) {
  MakeRing(4096);
  const std::vector<std::vector<uint8_t>> sent = {Payload(0, 5), {}, Payload(2, 100)};
  for (const auto& bytes : sent) ASSERT_TRUE(Write(bytes));
  for (uint64_t i = 0; i < sent.size(); ++i) {
    const std::optional<ShmMessage> message = Read();
    ASSERT_TRUE(message.has_value());
    EXPECT_EQ(message->sequence, i);
    EXPECT_EQ(std::vector<uint8_t>(message->data, message->data + message->size), sent[i]);
    EXPECT_GE(message->data, segment_->data());
    EXPECT_LE(message->data + message->size, segment_->data() + segment_->capacity());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(message->data) % 16, 0u);
    reader_->Release();
  }
  EXPECT_FALSE(Read().has_value());
}

TEST_F(ShmRingTest, WrapsAroundWithMessagesOfOddSizesEachContiguousAndIntact) {
  MakeRing(1024);
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> size_of(0, 300);
  uint64_t written = 0;
  uint64_t read = 0;
  uint64_t bytes_through = 0;
  std::vector<size_t> sizes;
  while (read < 3000) {
    // Write until the ring refuses, then read half of what waits, so that
    // records start at every offset and keep crossing the end.
    while (written < 3000) {
      const size_t size = size_of(random) | 1;
      if (!Write(Payload(written, size))) break;
      sizes.push_back(size);
      ++written;
    }
    ASSERT_GT(written, read) << "a ring with nothing unread refused a message";
    const uint64_t to_read = std::max<uint64_t>(1, (written - read) / 2);
    for (uint64_t n = 0; n < to_read && read < written; ++n, ++read) {
      const std::optional<ShmMessage> message = Read();
      ASSERT_TRUE(message.has_value()) << "message " << read;
      ASSERT_EQ(message->sequence, read);
      ASSERT_EQ(message->size, sizes[read]);
      ASSERT_LE(message->data + message->size, segment_->data() + segment_->capacity());
      ASSERT_EQ(std::memcmp(message->data, Payload(read, message->size).data(), message->size), 0)
          << "message " << read;
      bytes_through += message->size;
      reader_->Release();
    }
  }
  EXPECT_GT(bytes_through, 100 * segment_->capacity()) << "the ring wrapped many times";
  EXPECT_FALSE(Read().has_value());
}

TEST_F(ShmRingTest, RefusesAMessageLargerThanTheRingEvenWhenEmpty) {
  MakeRing(256);
  EXPECT_EQ(writer_->max_message_bytes(), 256u - 16);
  EXPECT_FALSE(Write(Payload(0, writer_->max_message_bytes() + 1)));
  EXPECT_FALSE(Write(Payload(0, 1 << 20)));
  ASSERT_TRUE(Write(Payload(0, writer_->max_message_bytes())));
  const std::optional<ShmMessage> message = Read();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->size, writer_->max_message_bytes());
}

TEST_F(ShmRingTest, AFullRingRefusesUntilTheReaderReleases) {
  MakeRing(256);
  int accepted = 0;
  while (Write(Payload(accepted, 48))) ++accepted;
  EXPECT_EQ(accepted, 256 / 64);
  const std::optional<ShmMessage> held = Read();
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(Write(Payload(accepted, 48))) << "a message read but not released keeps its room";
  reader_->Release();
  EXPECT_TRUE(Write(Payload(accepted, 48)));
  EXPECT_FALSE(Write(Payload(accepted + 1, 48)));
}

TEST_F(ShmRingTest, MessagesHeldTogetherFreeTheirRoomInRingOrderWhateverOrderTheyAreReleasedIn) {
  MakeRing(256);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Write(Payload(i, 48)));
  std::vector<ShmMessage> held;
  for (int i = 0; i < 4; ++i) {
    const std::optional<ShmMessage> message = Read();
    ASSERT_TRUE(message.has_value());
    held.push_back(*message);
  }
  // All four held at once, each intact.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(std::vector<uint8_t>(held[i].data, held[i].data + held[i].size), Payload(i, 48));
  }
  reader_->Release(held[3].sequence);
  reader_->Release(held[1].sequence);
  EXPECT_FALSE(Write(Payload(4, 48))) << "the first message still holds the ring's start";
  reader_->Release(held[0].sequence);
  EXPECT_TRUE(Write(Payload(4, 48)));  // the room of 0 and 1
  EXPECT_TRUE(Write(Payload(5, 48)));
  EXPECT_FALSE(Write(Payload(6, 48))) << "2 is still held";
  reader_->Release(held[2].sequence);
  EXPECT_TRUE(Write(Payload(6, 48)));
  // 2 and 3 were freed behind 4; the ring reads on in order.
  for (int i = 4; i <= 6; ++i) {
    const std::optional<ShmMessage> message = Read();
    ASSERT_TRUE(message.has_value());
    EXPECT_EQ(std::vector<uint8_t>(message->data, message->data + message->size), Payload(i, 48));
    reader_->Release(message->sequence);
  }
}

TEST_F(ShmRingTest, AnEmptiedRingTakesTheLargestMessageAtAnyPosition) {
  MakeRing(256);
  // Leave the positions near the end: one 160-byte record, read and released.
  ASSERT_TRUE(Write(Payload(0, 144)));
  ASSERT_TRUE(Read().has_value());
  reader_->Release();
  // The padding to the end is published at once; the message needs it read.
  EXPECT_FALSE(Write(Payload(1, writer_->max_message_bytes())));
  EXPECT_FALSE(Read().has_value()) << "the padding is no message";
  EXPECT_TRUE(Write(Payload(1, writer_->max_message_bytes())));
  const std::optional<ShmMessage> message = Read();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->sequence, 1u);
  EXPECT_EQ(message->data, segment_->data() + 16);
}

TEST_F(ShmRingTest, AReservationIsInvisibleUntilCommitted) {
  MakeRing(1024);
  StatusOr<std::optional<ShmSlot>> slot = writer_->TryReserve(10);
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  ASSERT_TRUE(slot->has_value());
  ASSERT_EQ((*slot)->size, 10u);
  std::memcpy((*slot)->data, "0123456789", 10);
  EXPECT_FALSE(Read().has_value());
  writer_->Commit();
  const std::optional<ShmMessage> message = Read();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(message->data), message->size), "0123456789");
}

TEST_F(ShmRingTest, ACorruptLengthIsDataLossNotACrash) {
  MakeRing(1024);
  ASSERT_TRUE(Write(Payload(0, 32)));
  shm_layout::RecordHeader record;
  std::memcpy(&record, segment_->data(), sizeof(record));
  record.length = 0xfffffff0u;
  std::memcpy(segment_->data(), &record, sizeof(record));
  const StatusOr<std::optional<ShmMessage>> message = reader_->TryRead();
  EXPECT_EQ(message.status().code(), Code::kDataLoss);
  EXPECT_NE(message.status().message().find(segment_->name()), std::string::npos)
      << message.status().ToString();
}

TEST_F(ShmRingTest, ACorruptKindOrSequenceIsDataLoss) {
  MakeRing(1024);
  ASSERT_TRUE(Write(Payload(0, 32)));
  shm_layout::RecordHeader record;
  std::memcpy(&record, segment_->data(), sizeof(record));
  shm_layout::RecordHeader bad_kind = record;
  bad_kind.kind = 7;
  std::memcpy(segment_->data(), &bad_kind, sizeof(bad_kind));
  EXPECT_EQ(reader_->TryRead().status().code(), Code::kDataLoss);
  shm_layout::RecordHeader bad_sequence = record;
  bad_sequence.sequence = 5;
  std::memcpy(segment_->data(), &bad_sequence, sizeof(bad_sequence));
  EXPECT_EQ(reader_->TryRead().status().code(), Code::kDataLoss);
}

TEST_F(ShmRingTest, CorruptPositionsAreDataLossOnBothSides) {
  MakeRing(1024);
  segment_->ring().tail.store(5 * 1024);
  EXPECT_EQ(reader_->TryRead().status().code(), Code::kDataLoss);
  segment_->ring().tail.store(0);
  segment_->ring().head.store(3 * 1024);
  EXPECT_EQ(writer_->TryWrite("x", 1).status().code(), Code::kDataLoss);
  segment_->ring().head.store(0);
}

TEST_F(ShmRingTest, ASecondWriterOrReaderIsRefused) {
  MakeRing(1024);
  EXPECT_EQ(ShmRingWriter::Attach(*segment_).status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(ShmRingReader::Attach(*segment_).status().code(), Code::kFailedPrecondition);
  writer_.reset();
  EXPECT_EQ(ShmRingWriter::Attach(*segment_).status().code(), Code::kFailedPrecondition)
      << "a ring serves one writer for its life";
}

TEST_F(ShmRingTest, TheReaderSeesTheWriterDetachAndStillReadsWhatItLeft) {
  MakeRing(1024);
  EXPECT_FALSE(reader_->WriterGone());
  ASSERT_TRUE(Write(Payload(0, 10)));
  writer_.reset();
  EXPECT_TRUE(reader_->WriterGone());
  const std::optional<ShmMessage> message = Read();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->size, 10u);
  reader_->Release();
  EXPECT_FALSE(Read().has_value());
}

TEST_F(ShmRingTest, TheWriterSeesTheReaderDetach) {
  MakeRing(1024);
  EXPECT_FALSE(writer_->ReaderGone());
  reader_.reset();
  EXPECT_TRUE(writer_->ReaderGone());
}

}  // namespace
}  // namespace pst

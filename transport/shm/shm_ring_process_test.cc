// The ring between two processes: the writer in a forked child that opens
// the segment by name, as a co-located peer task would.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstring>
#include <random>
#include <vector>

#include "common/crc32.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_testing.h"

namespace pst {
namespace {

constexpr int kWriteFailed = 2;
constexpr int kReaderGone = 3;
constexpr int kOpenFailed = 4;

// Message i: 4 bytes of CRC-32 of the rest, then pseudo-random bytes; sizes
// from 4 bytes to past a quarter of the ring.
std::vector<uint8_t> Message(uint64_t i) {
  std::mt19937 random(static_cast<uint32_t>(i));
  std::vector<uint8_t> bytes(4 + (i * 7919) % 20000);
  for (size_t k = 4; k < bytes.size(); ++k) bytes[k] = static_cast<uint8_t>(random());
  const uint32_t crc = Crc32(bytes.data() + 4, bytes.size() - 4);
  std::memcpy(bytes.data(), &crc, 4);
  return bytes;
}

// What a child does first: map the segment by name and attach as writer.
struct ChildWriter {
  std::unique_ptr<ShmSegment> segment;
  std::unique_ptr<ShmRingWriter> writer;
};
std::optional<ChildWriter> OpenAsWriter(const std::string& name, uint64_t cluster_id) {
  auto segment = ShmSegment::Open(name, cluster_id);
  if (!segment.ok()) return std::nullopt;
  auto writer = ShmRingWriter::Attach(**segment);
  if (!writer.ok()) return std::nullopt;
  return ChildWriter{std::move(*segment), std::move(*writer)};
}

// Writes message i until the ring takes it; the child's exit code on failure.
int WriteBlocking(ShmRingWriter& writer, const std::vector<uint8_t>& bytes) {
  while (true) {
    const StatusOr<bool> written = writer.TryWrite(bytes.data(), bytes.size());
    if (!written.ok()) return kWriteFailed;
    if (*written) return 0;
    if (writer.ReaderGone()) return kReaderGone;
    ::sched_yield();
  }
}

using ShmRingProcessTest = ShmTest;

TEST_F(ShmRingProcessTest, CarriesTenThousandMessagesIntactBetweenProcesses) {
  constexpr uint64_t kMessages = 10000;
  auto segment = ShmSegment::Create(cluster_id_, "transfer", 64 << 10);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  auto reader = ShmRingReader::Attach(**segment);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::string name = (*segment)->name();
  ForkedChild writer_task([&](int) {
    std::optional<ChildWriter> child = OpenAsWriter(name, cluster_id_);
    if (!child) return kOpenFailed;
    for (uint64_t i = 0; i < kMessages; ++i) {
      if (const int failed = WriteBlocking(*child->writer, Message(i)); failed != 0) return failed;
    }
    return 0;
  });

  uint64_t received = 0;
  while (received < kMessages) {
    // Asked before TryRead: a writer that exited had published all it wrote.
    const bool writer_exited = writer_task.Exited();
    const StatusOr<std::optional<ShmMessage>> message = (*reader)->TryRead();
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    if (!message->has_value()) {
      ASSERT_FALSE(writer_exited) << "the writer exited with " << writer_task.Wait() << " after "
                                  << received << " messages";
      ::sched_yield();
      continue;
    }
    const ShmMessage& m = **message;
    ASSERT_EQ(m.sequence, received);
    ASSERT_EQ(m.size, 4 + (received * 7919) % 20000) << "message " << received;
    uint32_t crc;
    std::memcpy(&crc, m.data, 4);
    ASSERT_EQ(crc, Crc32(m.data + 4, m.size - 4)) << "message " << received;
    (*reader)->Release();
    ++received;
  }
  EXPECT_EQ(writer_task.Wait(), 0);
  EXPECT_TRUE((*reader)->WriterGone());
  const StatusOr<std::optional<ShmMessage>> after = (*reader)->TryRead();
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_FALSE(after->has_value());
}

TEST_F(ShmRingProcessTest, AWriterKilledMidMessageLeavesItsCompleteMessagesAndNoPartOne) {
  auto segment = ShmSegment::Create(cluster_id_, "killed-writer", 64 << 10);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  auto reader = ShmRingReader::Attach(**segment);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const std::string name = (*segment)->name();
  ForkedChild writer_task([&](int ready_fd) {
    std::optional<ChildWriter> child = OpenAsWriter(name, cluster_id_);
    if (!child) return kOpenFailed;
    for (uint64_t i = 0; i < 5; ++i) {
      if (const int failed = WriteBlocking(*child->writer, Message(i)); failed != 0) return failed;
    }
    // Half of message 5 written in place, then killed before Commit.
    const std::vector<uint8_t> half = Message(5);
    const StatusOr<std::optional<ShmSlot>> slot = child->writer->TryReserve(half.size());
    if (!slot.ok() || !slot->has_value()) return kWriteFailed;
    std::memcpy((*slot)->data, half.data(), half.size() / 2);
    SignalReady(ready_fd);
    while (true) ::pause();
  });
  ASSERT_TRUE(writer_task.WaitReady()) << "exit code " << writer_task.Wait();
  writer_task.Kill();

  EXPECT_TRUE((*reader)->WriterGone());
  for (uint64_t i = 0; i < 5; ++i) {
    const StatusOr<std::optional<ShmMessage>> message = (*reader)->TryRead();
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    ASSERT_TRUE(message->has_value()) << "message " << i;
    EXPECT_EQ(std::vector<uint8_t>((*message)->data, (*message)->data + (*message)->size),
              Message(i));
    (*reader)->Release();
  }
  const StatusOr<std::optional<ShmMessage>> partial = (*reader)->TryRead();
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  EXPECT_FALSE(partial->has_value());
}

TEST_F(ShmRingProcessTest, AReaderKilledHoldingAMessageIsSeenGoneByTheWriter) {
  auto segment = ShmSegment::Create(cluster_id_, "killed-reader", 4096);
  ASSERT_TRUE(segment.ok()) << segment.status().ToString();
  auto writer = ShmRingWriter::Attach(**segment);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  const std::vector<uint8_t> bytes(1000, 9);
  int written = 0;
  while (*(*writer)->TryWrite(bytes.data(), bytes.size())) ++written;
  ASSERT_GT(written, 0);
  const std::string name = (*segment)->name();
  ForkedChild reader_task([&](int ready_fd) {
    auto peer = ShmSegment::Open(name, cluster_id_);
    if (!peer.ok()) return kOpenFailed;
    auto reader = ShmRingReader::Attach(**peer);
    if (!reader.ok()) return kOpenFailed;
    const StatusOr<std::optional<ShmMessage>> held = (*reader)->TryRead();
    if (!held.ok() || !held->has_value()) return kWriteFailed;
    SignalReady(ready_fd);
    while (true) ::pause();
  });
  ASSERT_TRUE(reader_task.WaitReady()) << "exit code " << reader_task.Wait();
  EXPECT_FALSE((*writer)->ReaderGone());
  reader_task.Kill();
  EXPECT_TRUE((*writer)->ReaderGone());
  // What the dead reader held is never released: the sender falls back.
  EXPECT_FALSE(*(*writer)->TryWrite(bytes.data(), bytes.size()));
}

}  // namespace
}  // namespace pst

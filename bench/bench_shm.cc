// bench_shm: what the shared-memory ring (shm_ring.h) costs between two
// processes, against plain memcpy measured in the same run.
//
// For payloads of 4 KiB and 1 MiB, with the writer in this process and the
// reader in a forked child, each on its own ring of 8 MiB:
//  1. MiB/s: the writer copies 1 GiB of messages in (TryWrite); the child
//     reads each in place and releases it; the clock stops when the child's
//     1-byte acknowledgement of the last one comes back on a second ring.
//     The child does not touch the payload: this is the channel's cost.
//     Baseline: memcpy of the same messages between two buffers, one thread.
//  2. Round trip: one message there, the child copies it into the reply
//     ring from where it lies, the reply read back. Baseline: two memcpys.
// Each figure is the median of 5 repeats; both sides spin (sched_yield) while
// the ring is full or empty, so the figures need two free cores.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_main.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"

namespace pst {
namespace {

constexpr size_t kRingBytes = 8 << 20;
constexpr size_t kStreamBytes = size_t{1} << 30;
constexpr int kRepeats = 5;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename T>
T OrDie(StatusOr<T> value) {
  CHECK(value.ok()) << value.status().ToString();
  return std::move(value).value();
}

void WriteSpinning(ShmRingWriter& writer, const void* data, size_t size) {
  while (!OrDie(writer.TryWrite(data, size))) {
    CHECK(!writer.ReaderGone()) << "the reader is gone";
    ::sched_yield();
  }
}

ShmMessage ReadSpinning(ShmRingReader& reader) {
  while (true) {
    if (std::optional<ShmMessage> message = OrDie(reader.TryRead())) return *message;
    CHECK(!reader.WriterGone()) << "the writer is gone";
    ::sched_yield();
  }
}

// The child's side: per repeat, read `messages` and acknowledge; then echo
// `round_trips` messages back.
int RunChild(const std::string& there, const std::string& back, uint64_t cluster_id,
             size_t messages, int round_trips) {
  auto there_segment = OrDie(ShmSegment::Open(there, cluster_id));
  auto back_segment = OrDie(ShmSegment::Open(back, cluster_id));
  auto reader = OrDie(ShmRingReader::Attach(*there_segment));
  auto writer = OrDie(ShmRingWriter::Attach(*back_segment));
  const char ack = 1;
  for (int r = 0; r < kRepeats; ++r) {
    for (size_t i = 0; i < messages; ++i) {
      ReadSpinning(*reader);
      reader->Release();
    }
    WriteSpinning(*writer, &ack, 1);
  }
  for (int i = 0; i < kRepeats * round_trips; ++i) {
    const ShmMessage message = ReadSpinning(*reader);
    WriteSpinning(*writer, message.data, message.size);
    reader->Release();
  }
  return 0;
}

struct Row {
  size_t payload;
  double memcpy_mib_s, ring_mib_s;
  double memcpy_round_trip_us, ring_round_trip_us;
};

Row Measure(size_t payload, uint64_t cluster_id) {
  const size_t messages = kStreamBytes / payload;
  const int round_trips = payload < (64 << 10) ? 5000 : 200;
  const std::string purpose = "bench-" + std::to_string(payload);
  auto there = OrDie(ShmSegment::Create(cluster_id, purpose + "-there", kRingBytes));
  auto back = OrDie(ShmSegment::Create(cluster_id, purpose + "-back", kRingBytes));
  const pid_t child = ::fork();
  CHECK_GE(child, 0) << "fork failed";
  if (child == 0) {
    ::_exit(RunChild(there->name(), back->name(), cluster_id, messages, round_trips));
  }
  auto writer = OrDie(ShmRingWriter::Attach(*there));
  auto reader = OrDie(ShmRingReader::Attach(*back));
  std::vector<uint8_t> source(payload), target(payload);
  std::mt19937 random(1);
  for (uint8_t& byte : source) byte = static_cast<uint8_t>(random());
  const double mib = static_cast<double>(messages * payload) / (1 << 20);

  Row row{payload, 0, 0, 0, 0};
  std::vector<double> memcpy_s, ring_s, memcpy_rt, ring_rt;
  for (int r = 0; r < kRepeats; ++r) {
    Clock::time_point start = Clock::now();
    for (size_t i = 0; i < messages; ++i) {
      std::memcpy(target.data(), source.data(), payload);
      source[i % payload] ^= target[(i * 7) % payload];  // keeps each copy observable
    }
    memcpy_s.push_back(SecondsSince(start));

    start = Clock::now();
    for (size_t i = 0; i < messages; ++i) WriteSpinning(*writer, source.data(), payload);
    ReadSpinning(*reader);
    reader->Release();
    ring_s.push_back(SecondsSince(start));
  }
  for (int r = 0; r < kRepeats; ++r) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < round_trips; ++i) {
      std::memcpy(target.data(), source.data(), payload);
      std::memcpy(source.data(), target.data(), payload);
      source[i % payload] ^= 1;
    }
    memcpy_rt.push_back(SecondsSince(start) / round_trips * 1e6);

    start = Clock::now();
    for (int i = 0; i < round_trips; ++i) {
      WriteSpinning(*writer, source.data(), payload);
      const ShmMessage echo = ReadSpinning(*reader);
      CHECK_EQ(echo.size, payload);
      reader->Release();
    }
    ring_rt.push_back(SecondsSince(start) / round_trips * 1e6);
  }
  int status = 0;
  CHECK_EQ(::waitpid(child, &status, 0), child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the reader process failed";
  row.memcpy_mib_s = mib / Median(memcpy_s);
  row.ring_mib_s = mib / Median(ring_s);
  row.memcpy_round_trip_us = Median(memcpy_rt);
  row.ring_round_trip_us = Median(ring_rt);
  return row;
}

int Run() {
  std::random_device device;
  const uint64_t cluster_id = (static_cast<uint64_t>(device()) << 32) | device();
  std::printf("%-8s %12s %12s %8s %14s %14s %8s\n", "payload", "memcpy MiB/s", "ring MiB/s",
              "ring/cpy", "memcpy x2 us", "ring rt us", "ring/cpy");
  for (const size_t payload : {size_t{4} << 10, size_t{1} << 20}) {
    const Row row = Measure(payload, cluster_id);
    const std::string label = payload < (1 << 20) ? std::to_string(payload >> 10) + " KiB"
                                                  : std::to_string(payload >> 20) + " MiB";
    std::printf("%-8s %12.0f %12.0f %8.2f %14.2f %14.2f %8.2f\n", label.c_str(), row.memcpy_mib_s,
                row.ring_mib_s, row.ring_mib_s / row.memcpy_mib_s, row.memcpy_round_trip_us,
                row.ring_round_trip_us, row.ring_round_trip_us / row.memcpy_round_trip_us);
  }
  return 0;
}

}  // namespace
}  // namespace pst

int main(int argc, char** argv) {
  if (!pst::StartBenchmark(&argc, &argv,
                           "bench_shm: MiB/s and round trip through the shared-memory ring "
                           "between two processes, against memcpy in the same run",
                           "bench/bench_shm.cc")) {
    return 0;
  }
  return pst::Run();
}

#include "chief/reporting/event_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string_view>
#include <tuple>

#include "chief/checkpoints/crc32c.h"

namespace pst {
namespace {

namespace fs = std::filesystem;

TEST(Crc32cTest, KnownAnswers) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  const std::string zeros(32, '\x00');
  const std::string ones(32, '\xff');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720, B.4
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
}

struct Scalar {
  std::string tag;
  int64_t step;
  double value;
  bool operator==(const Scalar& o) const {
    return std::tie(tag, step, value) == std::tie(o.tag, o.step, o.value);
  }
  bool operator<(const Scalar& o) const {
    return std::tie(tag, step, value) < std::tie(o.tag, o.step, o.value);
  }
};

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  return os << s.tag << "@" << s.step << "=" << s.value;
}

// Two evaluations as the chief logs them; 5e9 needs a five-byte varint step.
std::vector<Scalar> ExampleScalars() {
  return {{"loss", 100, 0.6931},
          {"test_accuracy", 100, 0.9712},
          {"steps_per_sec", 100, 1234.5},
          {"staleness_mean", 100, 1.25},
          {"gradients_dropped", 100, 3},
          {"loss", 5000000000, 0.05},
          {"test_accuracy", 5000000000, 0.99}};
}

// The first evaluation as one Event, the rest one Event per scalar.
void WriteExample(EventWriter& writer) {
  std::vector<std::pair<std::string, double>> first;
  for (const Scalar& s : ExampleScalars()) {
    if (s.step == 100) first.emplace_back(s.tag, s.value);
  }
  ASSERT_TRUE(writer.AddScalars(100, first).ok());
  for (const Scalar& s : ExampleScalars()) {
    if (s.step != 100) {
      ASSERT_TRUE(writer.AddScalar(s.tag, s.step, s.value).ok());
    }
  }
}

// What a reader gets back: values rounded to float, in sorted order.
std::vector<Scalar> AsStored(std::vector<Scalar> scalars) {
  for (Scalar& s : scalars) s.value = static_cast<float>(s.value);
  std::sort(scalars.begin(), scalars.end());
  return scalars;
}

// Reads little-endian fixed fields, varints and length-delimited fields from a
// buffer. Running out of bytes fails the test and yields what is left.
class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  bool done() const { return data_.empty(); }

  std::string_view Take(uint64_t n) {
    if (n > data_.size()) {
      ADD_FAILURE() << "truncated: want " << n << " bytes, " << data_.size() << " left";
      n = data_.size();
    }
    const std::string_view taken = data_.substr(0, n);
    data_.remove_prefix(n);
    return taken;
  }
  uint64_t Fixed(int bytes) {
    const std::string_view b = Take(bytes);
    uint64_t v = 0;
    for (size_t i = 0; i < b.size(); ++i) v |= uint64_t{static_cast<uint8_t>(b[i])} << (8 * i);
    return v;
  }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && !done(); shift += 7) {
      const uint8_t byte = static_cast<uint8_t>(Take(1)[0]);
      v |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    ADD_FAILURE() << "bad varint";
    return v;
  }
  std::string_view LengthDelimited() { return Take(Varint()); }

 private:
  std::string_view data_;
};

// Restated from the TFRecord format, independently of the writer.
uint32_t MaskedCrc(std::string_view bytes) {
  const uint32_t crc = Crc32c(bytes.data(), bytes.size());
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

// Every record's data, checking both CRCs of each.
std::vector<std::string> ReadRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  Cursor cursor(file);
  std::vector<std::string> records;
  while (!cursor.done()) {
    const std::string_view length = cursor.Take(8);
    EXPECT_EQ(cursor.Fixed(4), MaskedCrc(length)) << "length CRC of record " << records.size();
    const std::string_view data = cursor.Take(Cursor(length).Fixed(8));
    EXPECT_EQ(cursor.Fixed(4), MaskedCrc(data)) << "data CRC of record " << records.size();
    records.emplace_back(data);
  }
  return records;
}

struct Event {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> values;  // Summary: (tag, simple_value)
};

void DecodeSummary(std::string_view data, Event* event) {
  Cursor summary(data);
  while (!summary.done()) {
    ASSERT_EQ(summary.Varint(), 0x0Au) << "Summary.value";
    Cursor value(summary.LengthDelimited());
    std::string tag;
    float simple_value = 0;
    while (!value.done()) {
      const uint64_t key = value.Varint();
      if (key == 0x0A) {
        tag = value.LengthDelimited();
      } else {
        ASSERT_EQ(key, 0x15u) << "Value.simple_value";
        const uint32_t bits = static_cast<uint32_t>(value.Fixed(4));
        std::memcpy(&simple_value, &bits, sizeof(bits));
      }
    }
    event->values.emplace_back(tag, simple_value);
  }
}

Event DecodeEvent(std::string_view data) {
  Event event;
  Cursor cursor(data);
  while (!cursor.done()) {
    const uint64_t key = cursor.Varint();
    if (key == 0x09) {
      const uint64_t bits = cursor.Fixed(8);
      std::memcpy(&event.wall_time, &bits, sizeof(bits));
    } else if (key == 0x10) {
      event.step = static_cast<int64_t>(cursor.Varint());
    } else if (key == 0x1A) {
      event.file_version = cursor.LengthDelimited();
    } else if (key == 0x2A) {
      DecodeSummary(cursor.LengthDelimited(), &event);
    } else {
      ADD_FAILURE() << "unexpected Event key " << key;
      break;
    }
  }
  return event;
}

class EventWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/event_writer_test/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    logdir_ = dir_ + "/logs/run";  // Open makes the parents too
  }
  std::string dir_;
  std::string logdir_;
};

TEST_F(EventWriterTest, ScalarsReadBackFromCheckedRecords) {
  auto writer = EventWriter::Open(logdir_);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  WriteExample(**writer);
  const std::string path = (*writer)->path();
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(logdir_));

  // Read while the writer is still open: every call flushes.
  const std::vector<std::string> records = ReadRecords(path);
  ASSERT_EQ(records.size(), 4u);  // file_version, one evaluation, two single scalars

  const Event first = DecodeEvent(records[0]);
  EXPECT_EQ(first.file_version, "brain.Event:2");
  EXPECT_TRUE(first.values.empty());
  EXPECT_NEAR(first.wall_time, static_cast<double>(std::time(nullptr)), 60.0);
  const std::string seconds = std::to_string(static_cast<int64_t>(first.wall_time));
  const std::string prefix = "events.out.tfevents." + seconds + ".";
  EXPECT_EQ(fs::path(path).filename().string().rfind(prefix, 0), 0u) << path;

  std::vector<Scalar> read;
  for (size_t i = 1; i < records.size(); ++i) {
    const Event event = DecodeEvent(records[i]);
    EXPECT_TRUE(event.file_version.empty());
    EXPECT_GE(event.wall_time, first.wall_time);
    for (const auto& [tag, value] : event.values) read.push_back({tag, event.step, value});
  }
  std::sort(read.begin(), read.end());
  EXPECT_EQ(read, AsStored(ExampleScalars()));
}

TEST_F(EventWriterTest, UncreatableLogdirIsAnErrorNamingIt) {
  fs::create_directories(dir_);
  const std::string blocker = dir_ + "/a_file";  // a file where a folder must go: fails as root too
  std::ofstream(blocker) << "x";
  auto writer = EventWriter::Open(blocker + "/run");
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find(blocker + "/run"), std::string::npos)
      << writer.status().ToString();
}

TEST_F(EventWriterTest, RunEventDirIsNamedAfterTheRunFolder) {
  EXPECT_EQ(RunEventDir("tb", "runs/20240101-120000"), "tb/20240101-120000");
  EXPECT_EQ(RunEventDir("tb", "/data/runs/a/"), "tb/a");
  EXPECT_EQ(RunEventDir("tb", "/data/runs/a/b/.."), "tb/a");
  EXPECT_EQ(RunEventDir("tb", "."), "tb/" + fs::current_path().filename().string());
}

TEST_F(EventWriterTest, RunEventDirWithoutARunFolderIsOneRunsOwn) {
  const std::string dir = RunEventDir("tb", "");
  EXPECT_EQ(dir.rfind("tb/run-", 0), 0u) << dir;
  EXPECT_EQ(dir.substr(dir.rfind('-') + 1), std::to_string(getpid())) << dir;
}

TEST_F(EventWriterTest, TensorBoardReadsTheFile) {
  // The test venv (scripts/test_venv.sh), else the system's python3.
  const char* venv_python = std::getenv("PST_TEST_PYTHON");
  const std::string python =
      venv_python != nullptr && fs::exists(venv_python) ? venv_python : "python3";
  if (std::system(("'" + python + "' -c 'import tensorboard' 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "TensorBoard's Python package is not installed (scripts/test_venv.sh "
                    "installs it): skipping the real-reader check";
  }
  const char* source = std::getenv("PST_SOURCE_DIR");
  ASSERT_NE(source, nullptr) << "PST_SOURCE_DIR is not set (run through ctest)";
  std::string path;
  {
    auto writer = EventWriter::Open(logdir_);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    WriteExample(**writer);
    path = (*writer)->path();
  }
  const std::string out = dir_ + "/read_events.txt";
  const std::string script = std::string(source) + "/scripts/read_events.py";
  const std::string command = "'" + python + "' '" + script + "' '" + path + "' > '" + out + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  std::ifstream in(out);
  std::vector<Scalar> read;
  Scalar s;
  while (in >> s.tag >> s.step >> s.value) read.push_back(s);
  std::sort(read.begin(), read.end());
  EXPECT_EQ(read, AsStored(ExampleScalars()));
}

}  // namespace
}  // namespace pst
